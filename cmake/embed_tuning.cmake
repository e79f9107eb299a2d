# Writes OUT: a C++ table of every compiler/tuning/*.tsv file as a raw
# string, so the planner needs no data file at run time. Run at build time.
file(GLOB files "${TUNING_DIR}/*.tsv")
list(SORT files)
set(body "// Generated from compiler/tuning/*.tsv by cmake/embed_tuning.cmake. Do not edit.\n")
string(APPEND body "#include \"plan/tuning_table.h\"\nnamespace gatejit::compiler {\nconst EmbeddedTuningTable kEmbeddedTuningTables[] = {\n")
foreach(f ${files})
  get_filename_component(name "${f}" NAME_WE)
  file(READ "${f}" text)
  string(APPEND body "  {\"${name}\", R\"gatejit_tsv(${text})gatejit_tsv\"},\n")
endforeach()
string(APPEND body "};\nconst size_t kEmbeddedTuningTableCount = sizeof(kEmbeddedTuningTables) / sizeof(kEmbeddedTuningTables[0]);\n}  // namespace gatejit::compiler\n")
file(WRITE "${OUT}.tmp" "${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
