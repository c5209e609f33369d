#!/usr/bin/env python3
"""The API-conventions check: every public call and struct of include/cudacore follows the rules
docs/api-conventions.md states, as far as a parser can see them:

  stream       a parameter after the `Stream` is defaulted or an options struct (the stream comes
               after the operands); `launch` is the stated exception, and a setter follows the
               setter rule instead.
  setter       a free `set_...` call that takes a cudacore object (a Stream, Context, Device,
               Kernel, ...) takes it first, before the value it sets:
               `set_synchronization_policy(stream, policy)`, `set_limit(context, which, value)`.
  options      nothing but defaulted options structs comes after a defaulted parameter whose type
               is `...Options` (the options are last).
  order        a `destination` parameter (or field) comes before its `source` (destination first,
               in every copy).
  defaults     every public field of a public struct has a default member initializer, except the
               ones listed in NO_DEFAULT with the reason the page gives.
  from_handle  a `from_handle` ends with a defaulted `...FromHandleOptions`, and every such struct
               begins with `take_ownership`; the types the page names as taking no options
               (FROM_HANDLE_WITHOUT_OPTIONS) are left out.
  enumerations every public enumeration has `std::string to_string(E)` in its header (nested ones
               `to_string(Outer::E)`); the ones the page names as returning a view of a fixed
               name (TO_STRING_VIEWS) are left out of the return type's check.

Declarations marked `[[deprecated(...)]]` are the old forms kept for one release: they are not
checked. Declarations and their parameters come from Universal Ctags (`ctags --output-format=json
--fields=+neSa`), a real C++ parser.

    python3 scripts/check-api-conventions.py              # lists every violation, exits 1 on any
    python3 scripts/check-api-conventions.py FILE...      # checks these headers instead
    python3 scripts/check-api-conventions.py --self-test  # checks this script on fixtures: one
                                                          # header breaking each rule fails with
                                                          # that rule's name, a clean one passes
"""
import json
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Fields the conventions page names as having no default, with its reason.
NO_DEFAULT = {
    "CompileJob::program": "a Program has no empty value; a designated initializer names it",
    "KernelNodeParams::kernel": "a Kernel has no empty value; a designated initializer names it",
    "ChildGraphNodeParams::graph": "a Graph has no empty value; a designated initializer names it",
    "EventRecordNodeParams::event": "an Event has no empty value; a designated initializer names it",
    "EventWaitNodeParams::event": "an Event has no empty value; a designated initializer names it",
    "ConditionalNode::bodies": "std::vector<Graph> of a Graph still incomplete; returned, not filled in",
}
# launch: the stream first, the kernel's arguments last (a parameter pack); copy_attributes: both
# operands are streams, the destination first as in every copy.
EXCEPTIONS = {"launch", "copy_attributes"}
# What they wrap nobody destroys (a device, a library's kernel), or their other arguments say who
# frees it (a Buffer's resource, owner or deleter).
FROM_HANDLE_WITHOUT_OPTIONS = {"Device", "Kernel", "Buffer"}
# Enumerations whose to_string returns a view of a fixed name (std::string_view or const char*),
# as the page says why: a caller's std::string_view of the result would dangle if it became a
# std::string. MemoryType's (pointer_attributes.hpp) changes with that header's coming rework.
TO_STRING_VIEWS = {"CodeType", "LinkerBackend", "MemoryType"}
# The objects a free setter sets something of: the one it takes comes first.
SETTER_OBJECTS = {"Stream", "Context", "Device", "Kernel", "Event", "Buffer", "MemoryPool", "Graph",
                  "GraphExec", "GreenContext", "CudaArray", "ObjectCode", "LoadedLibrary"}


def split_parameters(signature):
    """The parameters of a ctags signature "(a, b = {1, 2}, c)", split at top-level commas."""
    inner = signature.strip()[1:-1]
    parts, depth, current = [], 0, ""
    for char in inner:
        if char in "(<{[":
            depth += 1
        elif char in ")>}]":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    return [p for p in parts if p not in ("", "void")]


def parse_parameter(text):
    """(type, name, has_default) of one parameter."""
    declaration, _, default = text.partition("=")
    match = re.match(r"^(.*?)([A-Za-z_]\w*)\s*$", declaration.strip())
    if not match or not match.group(1).strip():
        return declaration.strip(), "", bool(default)
    return match.group(1).strip(), match.group(2), bool(default)


def is_options(type_text):
    return re.search(r"\b\w*Options\b", type_text) is not None


def is_stream(type_text):
    return re.search(r"(^|[^\w:])Stream\s*&?$", re.sub(r"\bconst\b", "", type_text).strip()) is not None


def setter_object(type_text):
    """The cudacore object a parameter's type names (`const Stream&` gives Stream), or None."""
    bare = re.sub(r"\b(const|volatile)\b|[&*]", "", type_text).strip()
    bare = bare.split("::")[-1].strip()
    return bare if bare in SETTER_OBJECTS else None


def is_free_setter(tag):
    return tag["name"].startswith("set_") and tag.get("scopeKind", "namespace") not in ("class", "struct")


def deprecated(lines, line):
    """Whether the declaration starting at 1-based `line` is marked deprecated just above it."""
    start = max(0, line - 4)
    above = "\n".join(lines[start:line])
    return "[[deprecated" in above and "};" not in "\n".join(lines[start + 1 : line - 1])


def check_function(tag, lines):
    name = tag["name"]
    if name in EXCEPTIONS or name.startswith("operator") or deprecated(lines, tag["line"]):
        return []
    where = f'{tag["path"]}:{tag["line"]}: {tag.get("scope", "") + "::" if tag.get("scope") else ""}{name}'
    params = [parse_parameter(p) for p in split_parameters(tag.get("signature", "()"))]
    problems = []
    if is_free_setter(tag):
        objects = [i for i, (t, _, d) in enumerate(params) if setter_object(t) and not d]
        if objects and objects[0] != 0:
            type_text, pname, _ = params[objects[0]]
            problems.append(f"{where}: setter: the object '{type_text} {pname}' is not the first parameter")
    stream_at = next((i for i, (t, _, _) in enumerate(params) if is_stream(t)), None)
    if stream_at is not None and not is_free_setter(tag):
        for type_text, pname, has_default in params[stream_at + 1 :]:
            if not has_default and not is_options(type_text):
                problems.append(f"{where}: stream: '{type_text} {pname}' follows the stream without a default")
    options_at = next((i for i, (t, _, d) in enumerate(params) if is_options(t) and d), None)
    if options_at is not None:
        for type_text, pname, has_default in params[options_at + 1 :]:
            if not (is_options(type_text) and has_default):
                problems.append(f"{where}: options: '{type_text} {pname}' follows the options")
    owner = tag.get("scope", "").split("::")[-1]
    if name == "from_handle" and owner not in FROM_HANDLE_WITHOUT_OPTIONS:
        last = params[-1] if params else ("", "", False)
        if not (re.search(r"\b\w*FromHandleOptions\b", last[0]) and last[2]):
            problems.append(f"{where}: from_handle: does not end with a defaulted ...FromHandleOptions")
    names = [pname for _, pname, _ in params]
    for i, pname in enumerate(names):
        if pname.startswith("source"):
            partner = "destination" + pname[len("source"):]
            if partner in names[i + 1 :]:
                problems.append(f"{where}: order: '{pname}' comes before '{partner}'")
    return problems


def check_field(tag, lines, fields_seen, struct_lines):
    scope = tag.get("scope", "")
    if scope in struct_lines and deprecated(lines, struct_lines[scope] + 1):
        return []
    qualified = f'{scope.split("::")[-1]}::{tag["name"]}'
    text = " ".join(lines[tag["line"] - 1 : tag.get("end", tag["line"])])
    declaration = text.split("//")[0]
    fields_seen.setdefault(scope, []).append(tag["name"])
    if qualified in NO_DEFAULT or "(" in declaration.split(tag["name"])[0]:
        return []
    after = declaration.split(tag["name"], 1)[-1]
    if "=" in after or "{" in after:
        return []
    return [f'{tag["path"]}:{tag["line"]}: {qualified}: defaults: no default member initializer']


def check_enumerations(tags):
    """Every public enumeration has a to_string in its header, returning std::string."""
    problems = []
    to_strings = {}
    for tag in tags:
        if tag["name"] == "to_string" and tag["kind"] in ("prototype", "function"):
            params = split_parameters(tag.get("signature", "()"))
            if params:
                type_text = re.sub(r"\bconst\b|&", "", parse_parameter(params[0])[0]).strip()
                to_strings.setdefault(tag["path"], {})[type_text] = tag.get("typeref", "")
    for tag in tags:
        if tag["kind"] != "enum" or tag.get("access", "public") != "public":
            continue
        if "detail" in tag.get("scope", "").split("::"):
            continue
        outer = tag.get("scope", "").split("::")[-1] if tag.get("scopeKind") in ("class", "struct") else ""
        name = f"{outer}::{tag['name']}" if outer else tag["name"]
        found = to_strings.get(tag["path"], {})
        typeref = next((ref for type_text, ref in found.items()
                        if type_text == name or type_text.endswith("::" + name)), None)
        where = f'{tag["path"]}:{tag["line"]}: {name}'
        if typeref is None:
            problems.append(f"{where}: enumerations: no to_string({name}) in its header")
        elif tag["name"] not in TO_STRING_VIEWS and typeref != "typename:std::string":
            problems.append(f"{where}: enumerations: to_string({name}) returns "
                            f"{typeref.replace('typename:', '')}, not std::string")
    return problems


def check(files):
    command = ["ctags", "--output-format=json", "--sort=no", "--fields=+neSaK", "--kinds-C++=pfmsg",
               "--language-force=C++", "-o", "-"] + [str(f) for f in files]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    tags = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    sources = {}
    problems = []
    struct_lines = {t.get("scope", "") + ("::" if t.get("scope") else "") + t["name"]: t["line"]
                    for t in tags if t["kind"] == "struct" and t.get("access", "public") == "public"}
    fields_seen = {}
    problems += check_enumerations(tags)
    for tag in tags:
        lines = sources.setdefault(tag["path"], pathlib.Path(tag["path"]).read_text().splitlines())
        if tag["kind"] in ("prototype", "function") and "signature" in tag:
            if "detail" in tag.get("scope", "").split("::"):
                continue
            problems += check_function(tag, lines)
        elif tag["kind"] == "member" and tag.get("scopeKind") == "struct" and tag.get("access", "public") == "public":
            if tag.get("scope") in struct_lines and "detail" not in tag.get("scope", "").split("::"):
                problems += check_field(tag, lines, fields_seen, struct_lines)
    # Every from_handle options struct begins with take_ownership.
    for scope, names in fields_seen.items():
        if scope.split("::")[-1].endswith("FromHandleOptions") and names and names[0] != "take_ownership":
            problems.append(f"{scope}: from_handle: its first field is '{names[0]}', not 'take_ownership'")
    # Source before destination among a struct's fields too.
    for scope, names in fields_seen.items():
        if "destination" in names and "source" in names and names.index("source") < names.index("destination"):
            problems.append(f"{scope}: order: field 'source' comes before 'destination'")
    return problems


FIXTURE_BAD = """
#pragma once
namespace cudacore {
class Stream;
struct CopyOptions { int hint = 0; };
struct Region { int x = 0; int width; };
struct Pair { int source = 0; int destination = 0; };
struct ThingFromHandleOptions { int flags = 0; bool take_ownership = false; };
class Thing { public: static Thing from_handle(int handle, bool take_ownership); };
void copy_bad_stream(int& destination, const Stream& stream, const int& source);
void copy_bad_options(int& destination, const int& source, const CopyOptions& options = {}, int extra = 0);
void copy_bad_order(const int& source, int& destination, const Stream& stream);
class Context;
enum class Policy { spin };
void set_bad_policy(Policy policy, const Stream& stream);
void set_bad_limit(int which, const Context& context, unsigned long value);
enum class Unnamed { a, b };
enum class Viewed { a, b };
const char* to_string(Viewed viewed) noexcept;
}  // namespace cudacore
"""
FIXTURE_GOOD = """
#pragma once
namespace cudacore {
class Stream;
struct CopyOptions { int hint = 0; };
struct Region { int x = 0; int width = 0; };
struct Pair { int destination = 0; int source{}; };
struct ThingFromHandleOptions { bool take_ownership = false; int flags = 0; };
class Thing { public: static Thing from_handle(int handle, const ThingFromHandleOptions& options = {}); };
void copy(int& destination, const int& source, const Stream& stream, const CopyOptions& options = {});
/// The earlier form.
[[deprecated("use copy(destination, source, stream)")]]
void copy(const int& source, int& destination, const Stream& stream);
class Context;
class Kernel;
class Device;
enum class Policy { spin };
void set_policy(const Stream& stream, Policy policy);
void set_limit(const Context& context, int which, unsigned long value);
void set_preference(const Kernel& kernel, Policy policy, const Device& device = Device());
/// The earlier order.
[[deprecated("use set_policy(stream, policy)")]]
void set_policy(Policy policy, const Stream& stream);
class Thing2 { public: void set_stream(const Stream& stream); void set_both(int value, const Stream& stream); };
std::string to_string(Policy policy);
struct Holder { enum class Kind { one, two }; Kind kind = Kind::one; };
std::string to_string(Holder::Kind kind);
class Hidden { enum class Opening { create }; };
namespace detail { enum class Internal { x }; }
}  // namespace cudacore
"""


def self_test():
    with tempfile.TemporaryDirectory() as folder:
        bad = pathlib.Path(folder) / "bad.hpp"
        good = pathlib.Path(folder) / "good.hpp"
        bad.write_text(FIXTURE_BAD)
        good.write_text(FIXTURE_GOOD)
        found = check([bad])
        expected = {
            "stream": "copy_bad_stream",
            "options": "copy_bad_options",
            "order": "copy_bad_order",
            "defaults": "Region::width",
            "setter": "set_bad_policy",
            "enumerations": "Unnamed",
        }
        failures = []
        for rule, subject in expected.items():
            if not any(f": {rule}:" in p and subject in p for p in found):
                failures.append(f"rule '{rule}' did not flag {subject}: {found}")
        if not any(": enumerations:" in p and "Viewed" in p and "const char" in p for p in found):
            failures.append(f"rule 'enumerations' did not flag Viewed's const char*: {found}")
        if not any(": setter:" in p and "set_bad_limit" in p for p in found):
            failures.append(f"rule 'setter' did not flag set_bad_limit: {found}")
        if not any("Pair: order:" in p for p in found):
            failures.append(f"the field order of Pair was not flagged: {found}")
        if not any("Thing::from_handle: from_handle:" in p for p in found):
            failures.append(f"Thing::from_handle's bool was not flagged: {found}")
        if not any("ThingFromHandleOptions: from_handle:" in p for p in found):
            failures.append(f"ThingFromHandleOptions's first field was not flagged: {found}")
        clean = check([good])
        if clean:
            failures.append(f"a header that follows the rules was flagged: {clean}")
        for failure in failures:
            print("self-test:", failure)
        if failures:
            return 1
        print(f"self-test: {len(found)} violations found in the bad fixture, none in the good one")
        return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    files = [pathlib.Path(a) for a in argv[1:]] or sorted((ROOT / "include" / "cudacore").glob("*.hpp"))
    problems = check(files)
    for problem in problems:
        print(problem)
    print(f"api conventions: {len(files)} headers, {len(problems)} violations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
