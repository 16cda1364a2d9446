# Script mode: writes OUTPUT, a C++ file holding INPUT's bytes as SYMBOL.
file(READ ${INPUT} hex HEX)
string(LENGTH "${hex}" hexlen)
math(EXPR size "${hexlen} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE ${OUTPUT} "// Generated from ${INPUT}; do not edit.\nnamespace nxc { namespace embedded {\nextern const unsigned char ${SYMBOL}[] = {\n${bytes}0x00};\nextern const unsigned long ${SYMBOL}_size = ${size};\n} }\n")
