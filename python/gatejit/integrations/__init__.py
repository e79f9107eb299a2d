"""Adapters that install gatejit into serving engines; each imports without its engine."""
