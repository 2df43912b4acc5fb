"""Builds the `uform` Python package: the `uform.lib` extension over libuform.

By default the extension compiles the C library's own sources (the folders CMakeLists.txt
globs under src/) into itself, so `pip install ./python` from a clone needs no prior CMake
build and the extension carries no run-time dependency on a shared libuform. Setting
UFORM_STATIC_LIBRARY=/path/to/libuform.a links a CMake-built static library instead
(its headers are still taken from the clone's include/).

The repository root is found from this file's own location (pip builds a local directory
in place), or from UFORM_SOURCE_DIR when the package directory was copied elsewhere.
"""

import os
import re
import sys
from glob import glob
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent


def repository_root() -> Path:
    candidates = []
    if os.environ.get("UFORM_SOURCE_DIR"):
        candidates.append(Path(os.environ["UFORM_SOURCE_DIR"]))
    candidates += [HERE.parent, HERE]
    for candidate in candidates:
        if (candidate / "include" / "uform.h").is_file() and (candidate / "src").is_dir():
            return candidate.resolve()
    sys.exit(
        "uform: cannot find the C sources (include/uform.h and src/) next to "
        f"{HERE}; build from a full clone, or set UFORM_SOURCE_DIR to the repository root"
    )


ROOT = repository_root()


def version() -> str:
    """The PEP 440 form of UFORM_VERSION_STRING ("4.0.0-rc.1" -> "4.0.0rc1")."""
    header = (ROOT / "include" / "uform" / "version.h").read_text()
    text = re.search(r'#define UFORM_VERSION_STRING "([^"]+)"', header).group(1)
    match = re.fullmatch(r"(\d+\.\d+\.\d+)(?:-(a|alpha|b|beta|rc)\.?(\d+))?", text)
    if not match:
        return text
    base, tag, number = match.groups()
    tag = {"alpha": "a", "beta": "b"}.get(tag, tag)
    return base + (f"{tag}{number}" if tag else "")


def library_sources() -> list:
    """The C library's sources, as CMakeLists.txt globs them (every src/**/*.c otherwise)."""
    cmake = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"file\(GLOB\s+uform_sources\s+(?:CONFIGURE_DEPENDS\s+)?([^)]*)\)", cmake)
    patterns = re.findall(r"\S+\.c\b", match.group(1)) if match else ["src/**/*.c"]
    sources = set()
    for pattern in patterns:
        sources.update(glob(str(ROOT / pattern), recursive=True))
    # The platform seam's WebAssembly side is for Emscripten builds only, as CMakeLists.txt
    # filters it out of native ones.
    return sorted(source for source in sources if not re.search(r"/src/platform/[a-z]+_emscripten\.c$", source))


extra_objects = []
static_library = os.environ.get("UFORM_STATIC_LIBRARY")
if static_library:
    extra_objects.append(str(Path(static_library).resolve()))


class BuildExt(build_ext):
    """Adds the C library's sources at build time: they lie outside this directory, and
    setup() arguments (which egg_info lists in the manifest) must be relative paths inside it."""

    def build_extension(self, ext):
        if ext.name == "uform.lib" and not static_library:
            ext.sources = [source for source in ext.sources if source in BINDING_SOURCES] + library_sources()
        super().build_extension(ext)


# The extension's own sources, one file per concern, sharing uform/_lib/binding.h.
BINDING_SOURCES = sorted(str(Path(path).as_posix()) for path in glob("uform/_lib/*.c", root_dir=HERE))

extension = Extension(
    "uform.lib",
    sources=BINDING_SOURCES,
    depends=sorted(glob("uform/_lib/*.h", root_dir=HERE)),
    include_dirs=[str(ROOT / "include"), str(ROOT / "src")],
    # UFORM_STATIC_DEFINE empties UFORM_API, so with -fvisibility=hidden the library's
    # symbols stay inside the extension and cannot clash with a libuform.so loaded beside it.
    define_macros=[("_GNU_SOURCE", "1"), ("UFORM_STATIC_DEFINE", "1"), ("UFORM_BUILDING_LIBRARY", "1")],
    extra_compile_args=["-std=c11", "-fvisibility=hidden", "-Wno-unused-parameter"],
    extra_objects=extra_objects,
    libraries=["pthread", "dl", "m"],
)

setup(
    version=version(),
    packages=["uform"],
    package_data={"uform": ["py.typed", "*.pyi"]},
    ext_modules=[extension],
    cmdclass={"build_ext": BuildExt},
    zip_safe=False,
)
