package dev.openshell.supervisor.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@link Glob#path(String)} (binary paths and L7 paths): the segment rules of {@code openshell-l7-semantics.md} section 1.4a, case by case. */
class GlobPathTest {
    @ParameterizedTest(name = "{0} ~ {1} = {2}")
    @CsvSource(delimiter = '|', value = {
        // * and ? stay within a segment
        "/usr/bin/*|/usr/bin/node|true",
        "/usr/bin/*|/usr/bin/|true",
        "/usr/bin/*|/usr/bin/sub/node|false",
        "/usr/bin/python*|/usr/bin/python3.11|true",
        "/home/*/.local/bin/copilot|/home/alice/.local/bin/copilot|true",
        "/home/*/.local/bin/copilot|/home/a/b/.local/bin/copilot|false",
        "/repos/*/issues|/repos/a/b/issues|false",
        "/usr/bin/python3.1?|/usr/bin/python3.11|true",
        "/usr/bin/python3.1?|/usr/bin/python3.1/|false",
        "*|/usr/bin/curl|false",
        "*|curl|true",
        // ** as a whole segment
        "**|/anything/at/all|true",
        "**|''|true",
        "**/node|/usr/local/nvm/versions/node/v20/bin/node|true",
        "**/node|/node|true",
        "**/node|node|true",
        "**/node|/usr/bin/nodejs|false",
        "/repos/**|/repos/|true",
        "/repos/**|/repos/a/b|true",
        "/repos/**|/repos|false",
        "/opt/@github/**/copilot|/opt/@github/copilot|true",
        "/opt/@github/**/copilot|/opt/@github/a/b/copilot|true",
        "/opt/@github/**/copilot|/opt/@github/a/b/copilot2|false",
        "/**/git-upload-pack|/git-upload-pack|true",
        "/**|/|true",
        // ** inside a segment is *
        "/usr/a**b|/usr/axyb|true",
        "/usr/a**b|/usr/ax/yb|false",
        // classes, alternatives, escapes
        "/usr/bin/python[23]*|/usr/bin/python3.11|true",
        "/usr/bin/python[!3]*|/usr/bin/python3.11|false",
        "/usr/bin/python[^3]*|/usr/bin/python2.7|true",
        "/usr/bin/[a-c]*|/usr/bin/bash|true",
        "/usr/bin/[a-c]*|/usr/bin/dash|false",
        "/a[/]b*|/a/b|false",
        "/a[!x]b*|/a/b|false",
        "/usr/bin/{curl,wget}*|/usr/bin/wget|true",
        "/usr/bin/{curl,wget}*|/usr/bin/git|false",
        "/usr/bin/\\*|/usr/bin/*|true",
        "/usr/bin/\\*|/usr/bin/x|false",
        // case-sensitive, whole value, metacharacters of regexes are literal
        "/usr/bin/Curl*|/usr/bin/curl|false",
        "/usr/bin/c++*|/usr/bin/c++-12|true",
        "/usr/bin/c.*|/usr/bin/cx|false",
        "/usr/bin/(x)*|/usr/bin/(x)y|true",
    })
    void matches(String glob, String value, boolean expected) {
        assertEquals(expected, Glob.path(glob).matches(value.equals("''") ? "" : value));
    }

    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(delimiter = '|', value = {
        "/usr/bin/[ab*|unclosed '[' at character 10",
        "/usr/bin/{a,b*|unclosed '{' at character 10",
        "/usr/{a,{b,c}}*|nested '{' at character 9: alternatives cannot be nested",
        "/usr/bin/[z-a]*|reversed range 'z'-'a' at character 11",
        "/usr/bin/*\\|a trailing '\\' escapes nothing",
        "/usr/bin/*}|unexpected '}' at character 11: no '{' is open (write \\} for the character)",
    })
    void rejects(String glob, String message) {
        assertEquals(message, assertThrows(IllegalArgumentException.class, () -> Glob.path(glob)).getMessage());
    }
}
