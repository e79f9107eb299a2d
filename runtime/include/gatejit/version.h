// gatejit's version; the generator version is part of every cache key.
#pragma once

#define GATEJIT_VERSION_MAJOR 0
#define GATEJIT_VERSION_MINOR 1
#define GATEJIT_VERSION_PATCH 0
#define GATEJIT_VERSION_STRING "0.1.0"
