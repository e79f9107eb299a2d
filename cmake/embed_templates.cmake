# Writes OUT: a C++ table of every templates/<role>/<name>.mlir file as a raw
# string, so the compiler needs no template file at run time. Run at build
# time. The compiler looks templates up by name, so a name is unique across
# the role folders.
cmake_policy(SET CMP0057 NEW)  # if(IN_LIST) in script mode
file(GLOB_RECURSE files RELATIVE "${TEMPLATE_DIR}" "${TEMPLATE_DIR}/*.mlir")
list(SORT files)
set(body "// Generated from templates/**/*.mlir by cmake/embed_templates.cmake. Do not edit.\n")
string(APPEND body "#include \"template_library.h\"\nnamespace gatejit::compiler {\nconst EmbeddedTemplate kEmbeddedTemplates[] = {\n")
set(names "")
foreach(f ${files})
  get_filename_component(name "${f}" NAME_WE)
  get_filename_component(dir "${f}" DIRECTORY)
  if(dir STREQUAL "")
    message(FATAL_ERROR "templates/${f}: a template lives in its role's folder (templates/README.md)")
  endif()
  if(name IN_LIST names)
    message(FATAL_ERROR "templates/${f}: another template is also named '${name}'; names are unique across role folders")
  endif()
  list(APPEND names "${name}")
  file(READ "${TEMPLATE_DIR}/${f}" text)
  string(APPEND body "  {\"${name}\", \"${dir}/${name}\", R\"gatejit_tpl(${text})gatejit_tpl\"},\n")
endforeach()
string(APPEND body "};\nconst size_t kEmbeddedTemplateCount = sizeof(kEmbeddedTemplates) / sizeof(kEmbeddedTemplates[0]);\n}  // namespace gatejit::compiler\n")
file(WRITE "${OUT}.tmp" "${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
