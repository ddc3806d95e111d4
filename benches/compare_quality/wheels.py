#!/usr/bin/env python3
"""`compare_procedures` on upstream's own builds: two manylinux wheels of each package.

`measure.py` compiles the releases itself, both alike. A wheel is what a user meets: built
by the project's CI, with its flags (`-O3 -g` from CPython's configuration, the C extension
with the bundled library), and a release may change how it builds (zstandard 0.19.0 exports
the zstd API from its extension, 0.22.0 hides it, so every call between API functions went
through the PLT before and is direct or inlined after). For zstandard, lz4 and Brotli, the
packages whose bundled C libraries `measure.py` builds, this script downloads the x86-64
and i686 wheels of two releases with `pip download`, takes the extension module, strips a
copy, compares the stripped copies through `rea serve` and scores the pairs against the
unstripped symbols with `measure.py`'s definitions (a true pair is a name that names one
function on each side; clones `.constprop.N`/`.isra.N` count as the function).

Usage: python3 benches/compare_quality/wheels.py [--rea target/release/rea]
Needs: pip, strip, readelf, objdump, ctags (as `measure.py`).
"""

import argparse
import fnmatch
import glob
import os
import sys
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402

# (package, releases, the extension module in the wheel, the Python both have wheels for)
PACKAGES = [
    ("zstandard", ("0.19.0", "0.22.0"), "zstandard/backend_c*.so", "3.11"),
    ("lz4", ("3.1.10", "4.3.3"), "lz4/frame/_frame*.so", "3.9"),
    ("Brotli", ("1.0.9", "1.1.0"), "_brotli*.so", "3.9"),
]
PLATFORMS = {"x86_64": "manylinux2014_x86_64", "i686": "manylinux2014_i686"}


def extension(package, release, module, python, platform):
    """(unstripped, stripped) extension module of one wheel, downloaded once."""
    folder = os.path.join(measure.WORK, "wheels", f"{package}-{release}-{platform}")
    unstripped, stripped = os.path.join(folder, "unstripped.so"), os.path.join(folder, "stripped.so")
    if not os.path.exists(stripped):
        os.makedirs(folder, exist_ok=True)
        measure.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                     "--only-binary=:all:", "--python-version", python, "--platform",
                     PLATFORMS[platform], f"{package}=={release}", "-d", folder])
        wheel = glob.glob(os.path.join(folder, "*.whl"))[0]
        with zipfile.ZipFile(wheel) as archive:
            member = next(n for n in archive.namelist() if fnmatch.fnmatch(n, module))
            with open(unstripped, "wb") as out:
                out.write(archive.read(member))
        measure.run(["strip", "-o", stripped, unstripped])
    return unstripped, stripped


def score(server, package, releases, module, python, platform):
    """`measure.score`'s pairs of one platform's two wheels (no sources: no changed set)."""
    (base_bin, base_stripped), (cand_bin, cand_stripped) = (
        extension(package, release, module, python, platform) for release in releases)
    result = measure.compare(server, base_stripped, cand_stripped)
    scored = measure.score({"label": f"{package} {' -> '.join(releases)}, {platform} wheels"},
                           ((base_bin, None, []), (cand_bin, None, [])), result)
    keys = ("pair", "procedures", "true_pairs", "correct", "wrong", "precision", "recall",
            "seconds_all_pages")
    return {key: scored[key] for key in keys}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rea", default=os.path.join(measure.ROOT, "target", "release", "rea"))
    arguments = parser.parse_args()
    server = measure.Server(arguments.rea)
    try:
        for package in PACKAGES:
            for platform in PLATFORMS:
                print(score(server, *package, platform), flush=True)
    finally:
        server.close()


if __name__ == "__main__":
    main()
