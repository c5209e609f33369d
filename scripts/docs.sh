#!/usr/bin/env bash
# Builds the API reference: Doxygen over include/cudacore, HTML into build-docs/html (not
# committed). Every warning fails it, an undocumented public class, function or member included,
# except the undocumented members listed in docs/doxygen-undocumented.txt: the members not yet
# documented when the headers became Doxygen comments. The list may only shrink: a member
# documented since fails the run too until it leaves the list (--update-list rewrites it).
#   scripts/docs.sh [--update-list] [OUT_DIR]     (default build-docs)
set -euo pipefail
export LC_ALL=C  # sort and comm agree on the order
cd "$(dirname "$0")/.."
bash scripts/install-packages.sh doxygen
update=0
if [ "${1:-}" = --update-list ]; then update=1; shift; fi
out="${1:-build-docs}"
mkdir -p "$out"
version=$(sed -n 's/^project(cudacore VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
warnings="$out/doxygen-warnings.txt"
# The settings that differ from Doxygen's defaults; `doxygen -` reads them from standard input.
doxygen - <<CONFIG || true
PROJECT_NAME           = cudacore
PROJECT_NUMBER         = $version
PROJECT_BRIEF          = "cuda.core's model in C++20: run-time compile and link, ObjectCode, streams, memory, graphs"
OUTPUT_DIRECTORY       = $out
INPUT                  = include/cudacore docs/api-mainpage.md
USE_MDFILE_AS_MAINPAGE = docs/api-mainpage.md
FILE_PATTERNS          = *.hpp
EXTENSION_MAPPING      = inc=C++
STRIP_FROM_PATH        = include
STRIP_FROM_INC_PATH    = include
FULL_PATH_NAMES        = YES
JAVADOC_AUTOBRIEF      = YES
EXTRACT_ALL            = NO
EXTRACT_STATIC         = YES
# detail:: is the library's own plumbing; the private "box" members are not part of the API.
EXCLUDE_SYMBOLS        = detail detail::* cudacore::detail cudacore::detail::* std::hash*
HIDE_FRIEND_COMPOUNDS  = YES
WARN_IF_UNDOCUMENTED   = YES
WARN_IF_DOC_ERROR      = YES
WARN_NO_PARAMDOC       = NO
WARN_AS_ERROR          = NO
WARN_LOGFILE           = $warnings
QUIET                  = YES
GENERATE_HTML          = YES
GENERATE_LATEX         = NO
HAVE_DOT               = NO
ENABLE_PREPROCESSING   = YES
PREDEFINED             = CUDACORE_DOXYGEN
MACRO_EXPANSION        = YES
SEARCH_INCLUDES        = NO
CONFIG
# "file: message" without line numbers, so that editing a header does not change the list.
list=docs/doxygen-undocumented.txt
sed -n 's|^.*include/cudacore/\([^:]*\):[0-9]*: [a-z]*: \(.*\)$|\1: \2|p' "$warnings" | sort -u \
  >"$out/undocumented-now.txt"
if [ "$update" = 1 ]; then
  grep ' is not documented\.$' "$out/undocumented-now.txt" >"$list" || true
fi
new=$(comm -23 "$out/undocumented-now.txt" <(sort -u "$list"))
gone=$(comm -13 "$out/undocumented-now.txt" <(sort -u "$list"))
unparsed=$(grep 'warning:\|error:' "$warnings" | grep -vc 'include/cudacore/' || true)
if [ -n "$new" ] || [ -n "$gone" ] || [ "$unparsed" != 0 ]; then
  [ -n "$new" ] && { echo "doxygen: warnings (fix the comment, document the member):"; echo "$new"; }
  [ -n "$gone" ] && { echo "doxygen: documented now, remove from $list (scripts/docs.sh --update-list):"; echo "$gone"; }
  [ "$unparsed" != 0 ] && grep 'warning:\|error:' "$warnings" | grep -v 'include/cudacore/'
  exit 1
fi
echo "API reference: $out/html/index.html (no warnings beyond the list: $(wc -l <"$list") members still undocumented, listed in $list)"
