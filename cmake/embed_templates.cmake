# Writes OUT: a C++ table of every templates/*.mlir file as a raw string, so
# the compiler needs no template file at run time. Run at build time.
file(GLOB files "${TEMPLATE_DIR}/*.mlir")
list(SORT files)
set(body "// Generated from templates/*.mlir by cmake/embed_templates.cmake. Do not edit.\n")
string(APPEND body "#include \"template_library.h\"\nnamespace gatejit::compiler {\nconst EmbeddedTemplate kEmbeddedTemplates[] = {\n")
foreach(f ${files})
  get_filename_component(name "${f}" NAME_WE)
  file(READ "${f}" text)
  string(APPEND body "  {\"${name}\", R\"gatejit_tpl(${text})gatejit_tpl\"},\n")
endforeach()
string(APPEND body "};\nconst size_t kEmbeddedTemplateCount = sizeof(kEmbeddedTemplates) / sizeof(kEmbeddedTemplates[0]);\n}  // namespace gatejit::compiler\n")
file(WRITE "${OUT}.tmp" "${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
