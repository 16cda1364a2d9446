# nxc_embed(INPUT SYMBOL OUTPUT_CPP): generates OUTPUT_CPP defining
#   const unsigned char nxc::embedded::SYMBOL[]; const unsigned long SYMBOL_size;
# with INPUT's bytes, regenerated whenever INPUT changes.
set(NXC_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/NxcEmbedFile.cmake)
function(nxc_embed input symbol output)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${input} -DSYMBOL=${symbol} -DOUTPUT=${output} -P ${NXC_EMBED_SCRIPT}
    DEPENDS ${input} ${NXC_EMBED_SCRIPT}
    COMMENT "Embedding ${symbol}")
endfunction()
