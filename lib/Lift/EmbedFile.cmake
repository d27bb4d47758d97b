# Embeds a file into C++ as a NUL-terminated char array:
#   cmake -DNAME=<Name> -DINPUT=<file> -DOUTPUT=<file.inc> -P EmbedFile.cmake
# writes `static const char kEmbed<Name>[]` and `kEmbed<Name>Size`.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hexLength)
math(EXPR size "${hexLength} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by EmbedFile.cmake; do not edit.\n"
  "static const char kEmbed${NAME}[] = {\n  ${bytes}0x00};\n"
  "static const size_t kEmbed${NAME}Size = ${size};\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
