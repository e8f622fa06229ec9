package dev.openshell.builtin.regex;

import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.internal.BodyCharsets;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Turns a request body into the text its upstream will read, by the request's headers: the entry point of the
 * decoding layers ({@link Charsets}, {@link JsonText}, {@link FormText}, {@link MimeText}, {@link XmlText},
 * {@link YamlText}).
 *
 * <ol>
 *   <li>A {@code Content-Encoding} other than {@code identity} is undecodable: the supervisor decodes the codings it
 *       supports before the stage runs and removes the header, so one still present is a coding nobody decoded.</li>
 *   <li>More than one {@code Content-Type} value is undecodable (the upstream's choice is unknown).</li>
 *   <li>A media type that repeats a parameter (RFC 6838 section 4.3: {@code charset="utf-8"; charset=utf-7}) is
 *       undecodable, in the request's header and in a part's: readers disagree on which one counts. A charset given
 *       as an RFC 2231 extended parameter ({@code charset*=utf-8''utf-16}, continuations {@code charset*0},
 *       {@code charset*1}, ...) is the declared charset
 *       ({@link dev.openshell.middleware.spi.internal.ExtendedCharset}); one next to a {@code charset} naming another
 *       charset is a repeat, and one that cannot be decoded is undecodable.</li>
 *   <li>{@code multipart/*}: split into parts by its boundary, each part decoded by its own headers.</li>
 *   <li>{@code message/*} and {@code application/mbox}: each message's header block read with its encoded words and
 *       parameters decoded, its body decoded by its own headers, as a part is ({@link MessageText}).</li>
 *   <li>Otherwise the charset layer runs ({@link Charsets}: a byte order mark is honoured where the media type's
 *       reader honours it, JSON's detection of UTF-16 and UTF-32, XML's (XML 1.0 Appendix F, whose declaration must
 *       then name the detected encoding); elsewhere one that would change the reading is
 *       undecodable), then by media type: JSON ({@code application/json}, {@code +json}, and the
 *       JSON sequence types) must be valid JSON and is read with its escapes decoded; a form body is read with its
 *       percent-encoding decoded; anything else (or no {@code Content-Type}) is read as JSON when it is valid JSON
 *       starting with {@code {} or {@code [}, else as the text itself and, when it holds JSON string escapes (YAML
 *       escapes for YAML), also with them decoded (both readings scanned: a lenient JSON reader decodes them); XML,
 *       HTML and any text that holds {@code &#} or a CDATA section are also read as a markup parser reads them
 *       ({@link XmlText}: character references, CDATA sections, comments), HTML also as a WHATWG tokenizer reads
 *       it (bogus comments: {@code <!x>}, {@code <?x>}, {@code </ x>}, a comment closed by {@code --!>}), and XML
 *       that declares entities is undecodable.</li>
 *   <li>An XML declaration's {@code encoding} counts where no charset is declared; one naming a charset outside the
 *       supported set is undecodable. So is content that declares such a charset in itself (the UTF-7 signature
 *       {@code +/v8} at its start, an XML declaration in its first 1024 bytes, an HTML {@code <meta>} charset
 *       anywhere: {@link BodyCharsets}, {@link #checkDeclaredInBody}; a JSON body by its signature only).</li>
 *   <li>Content read as UTF-16 or UTF-32 (a charset that is not ASCII-compatible) is also read as its bytes are, by
 *       the same media-type layer, and both readings are scanned ({@link TwoReadings}): a reader that ignores the
 *       declared charset reads a key written in ASCII bytes under {@code charset=utf-16le}. Content declared
 *       {@code UTF-16} or {@code UTF-32} (no byte order) without a byte order mark is read in both byte orders too
 *       (RFC 2781 says big-endian, Python's and .NET's decoders read little-endian), the other one leniently.</li>
 *   <li>Content read in an ASCII-compatible charset that holds ISO 2022 escape sequences, SO/SI or HZ shifts is
 *       also read with them dropped ({@link DroppedText}), as a receiver sniffing an undeclared ISO-2022 or HZ
 *       charset reads its ASCII; both readings are scanned.</li>
 * </ol>
 */
final class BodyDecoder {
    private BodyDecoder() {
    }

    /**
     * {@return the view of a request body}
     *
     * @param headers the headers the stage received (lowercase names)
     * @param body the body, from 0 to its limit
     * @throws Undecodable if the body cannot be read as its upstream would read it
     */
    static TextView decode(List<HttpHeader> headers, ByteBuffer body) throws Undecodable {
        return decode(headers, body, true, new ContentTypes());
    }

    /**
     * {@return the view of a request body} As {@link #decode(List, ByteBuffer)}, its {@code Content-Type} read through
     * {@code contentTypes}, which remembers the last value's reading.
     *
     * @param headers the headers the stage received (lowercase names)
     * @param body the body, from 0 to its limit
     * @param contentTypes the provider's readings of {@code Content-Type} values
     * @throws Undecodable if the body cannot be read as its upstream would read it
     */
    static TextView decode(List<HttpHeader> headers, ByteBuffer body, ContentTypes contentTypes)
            throws Undecodable {
        return decode(headers, body, true, contentTypes);
    }

    /**
     * {@return the view of a window of a streamed response body that need not start at the body's first byte}
     * Decoded as {@link #decode}, but the window's first bytes are not read for a charset the body declares in
     * itself ({@link #checkDeclaredInBody}): they are not the body's start.
     *
     * @param headers the response headers (lowercase names)
     * @param window the bytes, from 0 to its limit
     * @throws Undecodable if the bytes cannot be read as the body's reader would read them
     */
    static TextView decodeWindow(List<HttpHeader> headers, ByteBuffer window) throws Undecodable {
        return decode(headers, window, false, new ContentTypes());
    }

    /**
     * {@return the view of a window of a streamed response body} As {@link #decodeWindow(List, ByteBuffer)}, its
     * {@code Content-Type} read through {@code contentTypes}, which remembers the last value's reading (a streamed
     * response's units all carry the same one).
     *
     * @param headers the response headers (lowercase names)
     * @param window the bytes, from 0 to its limit
     * @param contentTypes the provider's readings of {@code Content-Type} values
     * @throws Undecodable if the bytes cannot be read as the body's reader would read them
     */
    static TextView decodeWindow(List<HttpHeader> headers, ByteBuffer window, ContentTypes contentTypes)
            throws Undecodable {
        return decode(headers, window, false, contentTypes);
    }

    private static TextView decode(List<HttpHeader> headers, ByteBuffer body, boolean start,
            ContentTypes contentTypes) throws Undecodable {
        String contentType = null;
        for (HttpHeader h : headers) {
            if (h.name().equals("content-encoding")) {
                for (String coding : h.value().split(",")) {
                    String c = coding.strip().toLowerCase(Locale.ROOT);
                    if (!c.isEmpty() && !c.equals("identity")) {
                        throw Undecodable.because("request body has a content coding that was not decoded");
                    }
                }
            } else if (h.name().equals("content-type")) {
                if (contentType != null && !contentType.equals(h.value())) {
                    throw Undecodable.because("request has more than one Content-Type");
                }
                contentType = h.value();
            }
        }
        MediaType type = null;
        if (contentType != null) { // every other charset= of the value judged too (ContentTypes)
            ContentTypes.Reading reading = contentTypes.read(contentType);
            if (reading.refusal() != null) {
                throw Undecodable.because(reading.refusal());
            }
            type = reading.type();
        }
        return content(body, type, 0, false, start);
    }

    /**
     * {@return the view of content of a media type}
     *
     * @param input the content
     * @param type its media type, or {@code null} when none was given (or it did not parse)
     * @param depth how many multipart levels enclose it
     * @throws Undecodable if it cannot be read
     */
    static TextView content(ByteBuffer input, MediaType type, int depth) throws Undecodable {
        return content(input, type, depth, false);
    }

    /**
     * {@return the view of content of a media type}
     *
     * @param input the content
     * @param type its media type, or {@code null} when none was given (or it did not parse)
     * @param depth how many multipart levels enclose it
     * @param inFormData whether a {@code multipart/form-data} body encloses it ({@link MimeText})
     * @throws Undecodable if it cannot be read
     */
    static TextView content(ByteBuffer input, MediaType type, int depth, boolean inFormData) throws Undecodable {
        return content(input, type, depth, inFormData, depth > 0);
    }

    /**
     * {@return the view of content of a media type}
     *
     * @param input the content
     * @param type its media type, or {@code null} when none was given (or it did not parse)
     * @param depth how many multipart levels enclose it
     * @param inFormData whether a {@code multipart/form-data} body encloses it ({@link MimeText})
     * @param start whether the content is a body's or a part's start, read for the charsets it declares in itself
     *     ({@link #checkDeclaredInBody}; a multipart body's parts are, each)
     * @throws Undecodable if it cannot be read
     */
    private static TextView content(ByteBuffer input, MediaType type, int depth, boolean inFormData, boolean start)
            throws Undecodable {
        if (type != null && type.unclear() != null) {
            throw Undecodable.because(type.unclear());
        }
        if (type != null && type.isMultipart()) {
            return MimeText.multipart(input, type.boundary(), depth, inFormData || type.isFormData(),
                    type.subtype().equals("digest"));
        }
        if (type != null && (type.isMessage() || type.isMbox())) {
            if (start && depth == 0) {
                checkDeclaredInBody(input, type, -1);
            }
            return type.isMessage() ? MessageText.message(input, depth, inFormData)
                    : MessageText.mbox(input, depth, inFormData);
        }
        boolean xml = type != null && type.isXml();
        boolean json = type != null && (type.isJson() || type.isJsonSequence());
        String charset;
        TextView text;
        try {
            charset = xmlCharset(input, type, xml || type == null);
            text = Charsets.view(input, charset, json ? Charsets.Marks.JSON : xml ? Charsets.Marks.XML
                    : type == null ? Charsets.Marks.UNLABELLED : Charsets.Marks.DECLARED);
        } catch (Undecodable e) {
            if (start) { // a declaration's refusal comes first, as the reader of the declaration decodes by it
                checkDeclaredInBody(input, type, -1);
            }
            throw e;
        }
        boolean form = type != null && type.isForm();
        int holds = json || form || text instanceof Charsets.Transcoded ? -1 : escapedOrMarkedUp(text.text());
        if (start) {
            checkDeclaredInBody(input, type, holds);
        }
        if (xml && text instanceof Charsets.Transcoded transcoded) {
            transcoded.checkXmlDeclaration();
        }
        TextView read = typed(text, type, charset, holds);
        Charsets.Transcoded other = Charsets.Transcoded.otherOrder(input, charset, text);
        if (other != null) {
            TextView otherRead;
            try {
                otherRead = typed(other, type, charset, -1);
            } catch (Undecodable e) {
                otherRead = other; // not of its media type in that order: scanned as text
            }
            read = new TwoReadings(read, otherRead, other.codeUnit());
        }
        TextView dropped = text.shiftFree() ? null // the UTF-8 check saw no byte that starts one
                : DroppedText.view(text.text()); // transcoded text too: U+0001, U+FFFF, &#1; in UTF-16
        if (dropped != null) { // ISO 2022 escapes, SO/SI or HZ shifts: also read without them (P10-6)
            boolean marked = holds >= 0 ? (holds & MARKUP) != 0 : XmlText.worthReading(text.text());
            read = withoutDropped(read, TextView.stacked(text, dropped), type, json || form, marked);
            TextView shorter = DroppedText.shorterView(text.text()); // and as libxml2's HTML parser (P17c-1)
            if (shorter != null) {
                read = withoutDropped(read, TextView.stacked(text, shorter), type, json || form, marked);
            }
        }
        if (text instanceof Charsets.Transcoded transcoded) {
            return new TwoReadings(read, byteReading(input, type, json), transcoded.codeUnit());
        }
        return read;
    }

    /**
     * {@return text read by the layer of its media type: JSON with its escapes decoded, a form percent-decoded, else
     * as {@link #markupReading} reads it (or as JSON when it is a JSON document)}
     *
     * @param text the content's text in its charset
     * @param type the media type, or {@code null}
     * @param charset the charset the content is read in, or {@code null}
     * @param holds what the text holds ({@link #escapedOrMarkedUp}), or -1 when not known yet
     * @throws Undecodable if JSON is not valid, or XML declares entities
     */
    private static TextView typed(TextView text, MediaType type, String charset, int holds) throws Undecodable {
        ByteBuffer t = text.text();
        boolean xml = type != null && type.isXml();
        if (type != null && (type.isJson() || type.isJsonSequence())) {
            return TextView.stacked(text, JsonText.view(t, type.isJsonSequence()));
        }
        if (type != null && type.isForm()) {
            boolean utf8 = charset == null || Charsets.named(charset) != Charsets.Encoding.SINGLE_BYTE;
            return TextView.stacked(text, FormText.view(t, utf8));
        }
        if (xml && XmlDeclarations.declaresEntities(t)) {
            throw Undecodable.because("request body is XML that declares entities (their expansion is not read)");
        }
        TextView sniffed = JsonText.sniff(t);
        boolean markup = type != null && (xml || type.isHtml());
        if (sniffed != null && !markup) {
            return TextView.stacked(text, sniffed);
        }
        TextView read = markupReading(text, xml, type != null && type.readAsHtml(), type != null && type.isYaml(),
                holds);
        // markup that is also valid JSON is read both ways: an HTML reader never decodes its JSON escapes, a JSON
        // reader never its references (attacker pass 19, P25-1: ["ghp_...&#76;..."] as text/html)
        return sniffed == null ? read : also(read, text, sniffed);
    }

    /**
     * {@return the charset content is read in: the declared {@code charset}, else, for XML (and content without a
     * media type), the {@code encoding} of an XML declaration in ASCII bytes at its start (XML 1.0 section 4.3.3)}
     * An XML declaration read in ASCII bytes that names a charset those bytes cannot be in (UTF-16, UTF-32) or one
     * outside the supported set (UTF-7, EBCDIC, ...: an XML parser decodes it, the scan would read other text) makes
     * the content undecodable, whatever the {@code charset} parameter says.
     *
     * @param input the content
     * @param type its media type, or {@code null}
     * @param xml whether an XML declaration is looked for
     * @throws Undecodable if the declaration names such a charset
     */
    private static String xmlCharset(ByteBuffer input, MediaType type, boolean xml) throws Undecodable {
        String declared = type == null ? null : type.charset();
        if (!xml) {
            return declared;
        }
        String encoding = XmlDeclarations.declaredEncoding(input);
        if (encoding == null) {
            return declared;
        }
        if (Charsets.named(encoding).unit != 1) {
            throw Undecodable.because("request body's XML declaration names a charset its bytes are not in");
        }
        return declared != null ? declared : encoding;
    }

    /**
     * Checks the charsets content declares in itself ({@link BodyCharsets}: the UTF-7 signature, an XML declaration,
     * an HTML {@code <meta>} anywhere; attacker passes 9 and 10, P11-7, P12-3) as a declared {@code charset} is
     * checked: one outside the supported set (UTF-7, ...) makes it undecodable, as a reader that honours it (a
     * receiver running {@code charset_normalizer}, BeautifulSoup or lxml on the bytes) reads other text; so does an
     * XML declaration or {@code <meta>} in ASCII bytes naming UTF-16 or UTF-32. A JSON body is checked for the
     * signature only (its readers detect its encoding by RFC 8259, never by markup inside a string). Byte order
     * marks are the charset layer's ({@link Charsets}).
     *
     * <p>Content whose bytes hold no {@code <} ({@code holds}) declares nothing but a signature: only its first four
     * bytes are read.
     *
     * @param input the content
     * @param type its media type, or {@code null}
     * @param holds what the content's bytes hold ({@link #escapedOrMarkedUp}), or -1 when not known
     * @throws Undecodable if it declares such a charset
     */
    private static void checkDeclaredInBody(ByteBuffer input, MediaType type, int holds) throws Undecodable {
        boolean json = type != null && (type.isJson() || type.isJsonSequence());
        boolean signatureOnly = json || holds >= 0 && (holds & LESS_THAN) == 0;
        checkDeclared(signatureOnly ? BodyCharsets.signatureOf(input) : BodyCharsets.declared(input), json);
    }

    /**
     * Checks charsets content declares in itself, read by {@link BodyCharsets} (whole, or as a stream arrives), as
     * {@link #checkDeclaredInBody} does.
     *
     * @param found the declarations
     * @param json whether the content is JSON: only a signature counts
     * @throws Undecodable if one is outside the supported set, or a declaration in ASCII bytes names UTF-16 or UTF-32
     */
    static void checkDeclared(List<BodyCharsets.Declaration> found, boolean json) throws Undecodable {
        for (BodyCharsets.Declaration d : found) {
            if (json && d.source() != BodyCharsets.Source.SIGNATURE) {
                continue;
            }
            Charsets.Encoding e;
            try {
                e = Charsets.named(d.name());
            } catch (Undecodable x) {
                throw Undecodable.because("request body declares in itself a charset the scan cannot read");
            }
            if (d.source() != BodyCharsets.Source.SIGNATURE && e.unit != 1) {
                throw Undecodable.because("request body declares in itself a charset its bytes are not in");
            }
        }
    }

    /**
     * {@return text that is neither JSON nor a form, read as it is (with JSON string escapes decoded too, or for
     * YAML with YAML escapes decoded too) and, for markup ({@code xml}, {@code +xml}, {@code text/html}) or text
     * that holds {@code &#} or a CDATA section, also with its character references and CDATA sections decoded
     * ({@link XmlText}); every reading is scanned}
     *
     * @param text the text
     * @param xml whether the media type is XML
     * @param html whether the media type is HTML or XHTML: it is also read as HTML readers read it
     *     ({@link XmlText#htmlView}: bogus comments)
     * @param yaml whether the media type is YAML
     * @param known what the text holds ({@link #escapedOrMarkedUp}), or -1 when not known yet
     */
    private static TextView markupReading(TextView text, boolean xml, boolean html, boolean yaml, int known) {
        boolean markup = xml || html;
        TextView read = text;
        int holds;
        if (yaml) {
            TextView escapes = YamlText.view(text.text());
            read = escapes == null ? text : new TwoReadings(text, TextView.stacked(text, escapes), 1);
            holds = known >= 0 ? known & MARKUP : XmlText.worthReading(text.text()) ? MARKUP : 0;
        } else {
            holds = known >= 0 ? known & (ESCAPE | MARKUP) : escapedOrMarkedUp(text.text());
            if ((holds & ESCAPE) != 0) {
                read = escapedReading(text);
            }
        }
        return markupViews(read, text, markup || (holds & MARKUP) != 0, html, xml);
    }

    /**
     * {@return {@code read} and the markup readings of {@code text}, all scanned}: as browsers read it
     * ({@link XmlText#view}, and for HTML {@link XmlText#htmlView}), and as each reader that reads some reference of
     * it otherwise reads it ({@link MarkupReference}: Python's {@code html.unescape}, libxml2's HTML parser, and its
     * recovering XML parser for XML and for text of no markup type).
     *
     * @param read the readings so far
     * @param text the text
     * @param references whether it is read for references at all (markup, or text that holds {@code &#}, an
     *     undeclared entity or a CDATA section)
     * @param html whether its media type is HTML or XHTML
     * @param xml whether its media type is XML (XHTML is both)
     */
    private static TextView markupViews(TextView read, TextView text, boolean references, boolean html, boolean xml) {
        if (references) {
            read = also(read, text, XmlText.view(text.text()));
        }
        // text of no markup type read as markup is read by HTML readers too: whoever parses a fragment sent as
        // text/plain may parse it as HTML (attacker pass 21, P27-2: <![CDATA[x]]>T1<!-->-->T2, one run to html.parser)
        boolean asHtml = html || references && !xml;
        if (asHtml) {
            read = whatwgViews(read, text);
        }
        int differing = references ? MarkupReference.differing(text.text(), !xml && !html) : 0;
        if (asHtml) { // libxml2's HTML recovery from broken markup (P21-3, P22-4): its reading, always
            differing |= 1 << MarkupReference.Reader.LIBXML2_HTML.ordinal();
        }
        if (asHtml) { // Python's comment and section ends, raw text and end tags (P26-1, P28-4, P29-1): always
            differing |= 1 << MarkupReference.Reader.PYTHON.ordinal();
        }
        if (references && (xml || !html)) { // libxml2's XML recovery (P22-1 to P22-3): its reading, always
            differing |= 1 << MarkupReference.Reader.LIBXML2_XML.ordinal();
        }
        for (MarkupReference.Reader reader : MarkupReference.Reader.values()) {
            if ((differing & 1 << reader.ordinal()) != 0) { // a reader that drops a reference WHATWG reads (P19)
                read = also(read, text, XmlText.view(text.text(), reader));
                read = asHtml && reader != MarkupReference.Reader.LIBXML2_XML ? also(read, text,
                        XmlText.htmlView(text.text(), HtmlTags.literalOpeners(text.text(), reader), reader)) : read;
            }
        }
        return read;
    }

    /**
     * {@return {@code read} and the readings of {@code text} as HTML to WHATWG readers}: the tokenizer's with scripting
     * enabled, with it disabled where the text holds a {@code noscript} (html5lib, lxml and BeautifulSoup read its
     * content as markup: P30-1), and a tree builder's where it reads the text otherwise ({@link HtmlTree}: ignored and
     * foster-parenting start tags, foreign content: P29-2, P29-4, P30-3; text nodes split at comments)
     */
    private static TextView whatwgViews(TextView read, TextView text) {
        ByteBuffer t = text.text();
        HtmlTags.Openers openers = HtmlTags.literalOpeners(t, MarkupReference.Reader.WHATWG);
        read = also(read, text, XmlText.htmlView(t, openers, MarkupReference.Reader.WHATWG));
        List<HtmlTags.Openers> trees = new ArrayList<>(HtmlTags.treeReadings(openers, t));
        if (HtmlTags.holdsNoscript(t)) {
            HtmlTags.Openers disabled = HtmlTags.literalOpeners(t, MarkupReference.Reader.WHATWG, false);
            read = also(read, text, XmlText.htmlView(t, disabled, MarkupReference.Reader.WHATWG));
            trees.addAll(HtmlTags.treeReadings(disabled, t));
        }
        for (HtmlTags.Openers tree : trees) {
            read = also(read, text, XmlText.htmlView(t, tree, MarkupReference.Reader.WHATWG));
        }
        return read;
    }

    /**
     * {@return {@code read} and a reading without dropped sequences, and for content that is not JSON or a form, the
     * markup readings of that reading too, where the content is markup or the text or this reading holds what makes
     * text markup ({@link XmlText#worthReading})} (attacker pass 17b, P20-1: a control next to a comment inside a
     * token, which libxml2 drops both of, was found in neither reading alone)
     */
    private static TextView withoutDropped(TextView read, TextView dropped, MediaType type, boolean structured,
                                           boolean marked) {
        read = new TwoReadings(read, dropped, 1);
        if (structured) {
            return read;
        }
        boolean html = type != null && type.readAsHtml();
        boolean xml = type != null && type.isXml();
        // read as markup where the text was (its &a; may be among what the reading dropped: P21-1) or now is
        boolean references = html || xml || marked || XmlText.worthReading(dropped.text());
        return markupViews(read, dropped, references, html, xml);
    }

    /** {@return {@code read} and, when not {@code null}, {@code upper} over {@code text}: both scanned} */
    private static TextView also(TextView read, TextView text, TextView upper) {
        Interrupts.check(); // between readings, each a pass over the text
        return upper == null ? read : new TwoReadings(read, TextView.stacked(text, upper), 1);
    }

    /** {@link #escapedOrMarkedUp} bit: the text holds a valid JSON string escape. */
    private static final int ESCAPE = 1;
    /** {@link #escapedOrMarkedUp} bit: the text holds {@code &#} or {@code <![CDATA[} ({@link XmlText#worthReading}). */
    private static final int MARKUP = 2;
    /** {@link #escapedOrMarkedUp} bit: the text holds a {@code <} (where a charset declaration can start). */
    private static final int LESS_THAN = 4;

    /**
     * {@return {@link #ESCAPE}, {@link #MARKUP} and {@link #LESS_THAN} for what the text holds, found in one pass} It
     * reads eight bytes at a time to the next backslash, {@code &} or {@code <} and stops once it has found all three.
     *
     * @param input text (UTF-8, or ASCII-compatible)
     */
    private static int escapedOrMarkedUp(ByteBuffer input) {
        ByteBuffer b = input.duplicate().order(java.nio.ByteOrder.LITTLE_ENDIAN);
        int n = b.limit();
        int holds = 0;
        int i = 0;
        while (true) {
            i = JsonText.skipTo(b, i, n, JsonText.BACKSLASHES, XmlText.AMPERSANDS, XmlText.LESS_THANS);
            while (i < n && b.get(i) != '\\' && b.get(i) != '&' && b.get(i) != '<') {
                i++;
            }
            if (i >= n) {
                return holds;
            }
            holds |= b.get(i) == '<' ? LESS_THAN : 0;
            if (b.get(i) == '\\' ? JsonText.validEscape(b, i) > 0 : XmlText.markupAt(b, i)) {
                holds |= b.get(i) == '\\' ? ESCAPE : MARKUP;
            }
            if (holds == (ESCAPE | MARKUP | LESS_THAN)) {
                return holds;
            }
            i++;
        }
    }

    /**
     * {@return text that is not a JSON document as it is and, when it holds JSON string escapes, also with them
     * decoded ({@link JsonText#escapes}): both readings are scanned} A lenient JSON reader takes
     * <code>{"k":"\u0073k-...","n":NaN}</code>; a plain reader sees the escape itself.
     *
     * @param text the text
     */
    private static TextView escapedReading(TextView text) {
        TextView escapes = JsonText.escapes(text.text());
        return escapes == null ? text : new TwoReadings(text, TextView.stacked(text, escapes), 1);
    }

    /**
     * {@return the content read by an ASCII-compatible reader that ignores its charset: every byte below 0x80 is that
     * ASCII character, through the media type's layer where the bytes fit it (valid JSON, a form), else as they are}
     *
     * @param input the content
     * @param type its media type, or {@code null}
     * @param json whether the media type is JSON
     */
    private static TextView byteReading(ByteBuffer input, MediaType type, boolean json) {
        try {
            if (json) {
                return JsonText.view(input, type.isJsonSequence());
            }
            if (type != null && type.isForm()) {
                return FormText.view(input, false);
            }
        } catch (Undecodable e) {
            return TextView.identity(input); // not JSON in this reading: scanned as it is
        }
        TextView sniffed = JsonText.sniff(input);
        return sniffed == null ? TextView.identity(input) : sniffed;
    }
}
