# lit configuration for nxc's IR tests. The .nx files hold RUN lines that
# print a stage with `nxc aot --emit=...` and FileCheck it; the .mlir files
# (Dialect/, Conversion/, Transforms/) run one pass with nxc-opt.
import os
import lit.formats

config.name = "nxc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".nx", ".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(config.nxc), "..", "..", "test", "lit-out")
# nxc-opt first and only as a whole word, so that %nxc never rewrites it.
config.substitutions.append((r"(?<![\w/.%-])nxc-opt\b", config.nxc_opt))
config.substitutions.append(("%nxc", config.nxc))
config.substitutions.append(("FileCheck", config.filecheck))
config.substitutions.append(("%not", os.path.join(config.llvm_bin_dir, "not")))
config.substitutions.append(("split-file", os.path.join(config.llvm_bin_dir, "split-file")))
config.substitutions.append(("llvm-readelf", os.path.join(config.llvm_bin_dir, "llvm-readelf")))
# nxc aot --nif exists when nxc was built with erl_nif.h (runtime/CMakeLists.txt).
if config.erl_nif_include and not config.erl_nif_include.endswith("NOTFOUND"):
    config.available_features.add("beam-nif")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py.in", "Inputs"]
# The build's tools come before the system's in RUN lines.
config.environment["PATH"] = os.pathsep.join(
    [os.path.dirname(config.nxc_opt), os.path.dirname(config.nxc), config.environment.get("PATH", os.environ["PATH"])])
