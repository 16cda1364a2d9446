# A Cortex-M4F microcontroller, bare metal: Debian's arm-none-eabi GCC with
# newlib (gcc-arm-none-eabi, libnewlib-arm-none-eabi); I/O by semihosting.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR cortex-m4)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard")
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-system-arm -M mps2-an386 -nographic -semihosting -kernel)
# What nxc compiles the model for.
set(NXC_TARGET thumbv7em-none-eabihf)
set(NXC_CPU cortex-m4)
set(NXC_BARE_METAL ON)
