package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What an XML document declares about itself that changes how it is read: the {@code encoding} of its XML
 * declaration, and entities of its internal DTD subset (XML 1.0, sections 2.8 and 4.2). The markup reading itself is
 * {@link XmlText}.
 */
final class XmlDeclarations {
    private static final Pattern ENCODING = Pattern
            .compile("[ \t\r\n]encoding[ \t\r\n]*=[ \t\r\n]*(?:\"([^\"]*)\"|'([^']*)')");
    private static final byte[] ENTITY = "<!ENTITY".getBytes(StandardCharsets.US_ASCII);

    private XmlDeclarations() {
    }

    /**
     * {@return whether an XML document declares entities ({@code <!ENTITY}, in its internal DTD subset)} A parser
     * expands them where they are referenced, which this layer does not: such a document is undecodable.
     *
     * @param input the document as text
     */
    static boolean declaresEntities(ByteBuffer input) {
        int n = input.limit();
        for (int i = 0; i + ENTITY.length <= n; i++) {
            if (input.get(i) == '<' && XmlText.startsWith(input, i, ENTITY)) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@return the {@code encoding} of an XML declaration at the start of the input (after a UTF-8 byte order mark),
     * read as ASCII, or {@code null} when there is none}
     *
     * @param input the document's bytes
     */
    static String declaredEncoding(ByteBuffer input) {
        int n = Math.min(input.limit(), 512);
        int i = n >= 3 && input.get(0) == (byte) 0xef && input.get(1) == (byte) 0xbb && input.get(2) == (byte) 0xbf
                ? 3 : 0;
        byte[] head = new byte[n - i];
        input.get(i, head);
        String s = new String(head, StandardCharsets.ISO_8859_1);
        if (!s.startsWith("<?xml") || s.length() < 6 || !isSpace(s.charAt(5))) {
            return null;
        }
        int end = s.indexOf("?>");
        String decl = end < 0 ? s : s.substring(0, end);
        Matcher m = ENCODING.matcher(decl);
        if (!m.find()) {
            return null;
        }
        return m.group(1) != null ? m.group(1) : m.group(2);
    }

    private static boolean isSpace(char c) {
        return c == ' ' || c == '\t' || c == '\r' || c == '\n';
    }
}
