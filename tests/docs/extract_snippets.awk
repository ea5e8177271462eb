# Part of snippets_test.sh (its header comment has the convention): reads
# markdown files and writes WORK/NNN.cpp for every block fenced ```cpp or
# ```c++ (WORK/NNN.c for ```c: the C API's), and WORK/list with "NNN<tab>FILE<tab>LINE<tab>program|fragment" per block.
# #line directives make the compiler name the markdown file and line.
# Exits 3 on a fence that never closes, or on an untagged block that looks
# like C++ (it would silently escape the check: tag it cpp, or text).
# Usage: awk -v work=WORK -f extract_snippets.awk FILE.md...

function directive(line_no) { return sprintf("#line %d \"%s\"", line_no, FILENAME) }
function is_include(s) { return s ~ /^[ \t]*#[ \t]*include/ }
function is_given(s) { return s ~ /^[ \t]*\/\/[ \t]*given:/ }

# The standard headers every snippet may use without showing them (a C
# snippet: the C headers of the same things).
function prelude(out, lang,   h, k, i) {
    if (lang == "c")
        k = split("stddef.h stdint.h stdio.h stdlib.h string.h", h, " ")
    else
        k = split("chrono cstddef cstdint cstring functional iostream memory span string string_view system_error utility vector", h, " ")
    for (i = 1; i <= k; i++) print "#include <" h[i] ">" > out
}

# "T a; U b;" from every `// given:` line, as "T a, U b".
function given_params(   i, g, d, k, j, params) {
    params = ""
    for (i = 1; i <= n; i++) {
        if (!is_given(line[i])) continue
        g = line[i]; sub(/^[ \t]*\/\/[ \t]*given:/, "", g)
        k = split(g, d, ";")
        for (j = 1; j <= k; j++) {
            gsub(/^[ \t]+|[ \t]+$/, "", d[j])
            if (d[j] != "") params = params (params == "" ? "" : ", ") d[j]
        }
    }
    return params
}

function first_given_line(   i) {
    for (i = 1; i <= n; i++) if (is_given(line[i])) return start + i
    return start + 1
}

function write_program(out,   i) {
    print directive(start + 1) > out
    for (i = 1; i <= n; i++) print line[i] > out
}

# Includes at file scope, the rest as the body of int rpm_snippet_ID(GIVEN);
# an include's line is left blank in the body so that the lines still match.
function write_fragment(out, id,   i) {
    for (i = 1; i <= n; i++) if (is_include(line[i])) print directive(start + i) "\n" line[i] > out
    print directive(first_given_line()) "\nint rpm_snippet_" id "(" given_params() ") {" > out
    print directive(start + 1) > out
    for (i = 1; i <= n; i++) print (is_include(line[i]) ? "" : line[i]) > out
    print "return 0;\n}" > out
}

function write_block(lang,   id, out, i, kind) {
    id = sprintf("%03d", ++count)
    out = work "/" id (lang == "c" ? ".c" : ".cpp")
    kind = "fragment"
    for (i = 1; i <= n; i++) if (line[i] ~ /^[ \t]*int[ \t]+main[ \t]*\(/) kind = "program"
    print id "\t" FILENAME "\t" start "\t" kind > (work "/list")
    print "// " FILENAME ":" start " (" kind ")" > out
    prelude(out, lang)
    if (kind == "program") write_program(out); else write_fragment(out, id)
    close(out)
}

# An untagged block with a statement on rpm:: (`rpm::x(...);`, `auto a = rpm::...;`).
function check_untagged(   i) {
    for (i = 1; i <= n; i++) {
        if (line[i] ~ /rpm::[A-Za-z_].*;[ \t]*(\/\/.*)?$/) {
            printf "SNIPPET UNTAGGED: %s:%d: this block looks like C++ (line %d): fence it ```cpp, or ```text if it is not meant to compile\n", FILENAME, start, start + i
            failed = 1; exit 3
        }
    }
}

function unterminated() {
    printf "SNIPPET UNTERMINATED: %s:%d: a ``` fence that never closes\n", block_file, start
    failed = 1; exit 3
}

FNR == 1 && inside { unterminated() }
inside && /^[ \t]*```[ \t]*$/ {
    inside = 0
    if (tag == "cpp" || tag == "c++") write_block("cpp"); else if (tag == "c") write_block("c"); else if (tag == "") check_untagged()
    next
}
inside { line[++n] = $0; next }
/^[ \t]*```/ {
    tag = tolower($0); sub(/^[ \t]*```[ \t]*/, "", tag); sub(/[ \t].*$/, "", tag)
    inside = 1; start = FNR; n = 0; block_file = FILENAME
}
END { if (inside && !failed) unterminated() }
