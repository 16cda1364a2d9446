# lit configuration for nxc's IR tests: each .nx file holds RUN lines that
# print a stage with `nxc aot --emit=...` and FileCheck it.
import os
import lit.formats

config.name = "nxc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".nx"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(config.nxc), "..", "..", "test", "lit-out")
config.substitutions.append(("%nxc", config.nxc))
config.substitutions.append(("FileCheck", config.filecheck))
config.substitutions.append(("%not", os.path.join(config.llvm_bin_dir, "not")))
config.substitutions.append(("llvm-readelf", os.path.join(config.llvm_bin_dir, "llvm-readelf")))
config.excludes = ["lit.cfg.py", "lit.site.cfg.py.in", "Inputs"]
