package dev.openshell.supervisor.grpc.tck;

import dev.openshell.middleware.spi.Body;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * A request body the kit sends so that the service has something to act on: the built-in probes
 * ({@link #builtIns()}: e-mail addresses, secret-shaped tokens, an image part, the content a typical redactor or
 * classifier redacts, tags or denies) and the author's own ({@code supervisor tck --body FILE}, {@link #ofFile}).
 * Each is sent once, as a {@code POST} of the chat-completions path, and its answer goes through the supervisor's
 * result validation like every other evaluation: a transform, a header mutation or a denial the supervisor would
 * refuse fails {@code evaluate.<name>} and the {@code result.*} check of the rule it breaks.
 *
 * <p>Every token in the built-in probes is shaped like a real secret and is not one: AWS's documented example key,
 * a GitHub and an OpenAI token of the right length made of a repeated pattern.
 *
 * @param name the check's name after {@code evaluate.}: {@code probe_email}, {@code probe_secret},
 *     {@code probe_image}, or {@code body_N} for the N-th {@code --body} (from 1)
 * @param what one line naming the body in the report (for a file: its name, never its content)
 * @param contentType the request's {@code content-type}
 * @param body the body; never larger than {@link #MAX_FILE_BYTES}
 */
public record Probe(String name, String what, String contentType, Body body) {
    /** The largest {@code --body} file, in bytes: the contract's largest body (4 MiB). */
    public static final int MAX_FILE_BYTES = 4 * 1024 * 1024;

    private static final String HEAD = "{\"model\":\"tck-model\",\"messages\":[{\"role\":\"user\",\"content\":";
    private static final String TAIL = "}]}";
    /** A 1x1 PNG. */
    private static final String PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kg"
            + "AAAABJRU5ErkJggg==";

    /** @throws NullPointerException if any part is {@code null} */
    public Probe {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(what, "what");
        Objects.requireNonNull(contentType, "contentType");
        Objects.requireNonNull(body, "body");
    }

    /** {@return the built-in probes, in the order the kit sends them} */
    public static List<Probe> builtIns() {
        return List.of(
                json("probe_email", "a chat message with two e-mail addresses", "\"Please send the invoice to "
                        + "jane.doe@example.com and copy ops-team@example.org before Friday.\""),
                json("probe_secret", "a chat message with secret-shaped tokens (AWS access key ID, GitHub and "
                        + "OpenAI tokens)", "\"Deploy with AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE, "
                        + "GITHUB_TOKEN=ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5" + " and OPENAI_API_KEY=sk-proj-"
                        + "Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90Uv12Wx34" + " then rotate them.\""),
                json("probe_image", "a chat message with an image part (a PNG data URL)", "[{\"type\":\"text\","
                        + "\"text\":\"What is in this picture?\"},{\"type\":\"image_url\",\"image_url\":{\"url\":"
                        + "\"data:image/png;base64," + PNG + "\"}}]"));
    }

    private static Probe json(String name, String what, String content) {
        return new Probe(name, what, "application/json",
                Body.ofOwned((HEAD + content + TAIL).getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * {@return the {@code index}-th {@code --body} file as a probe}, with a content type from its extension
     * ({@code .json}: {@code application/json}; {@code .txt}: {@code text/plain}; {@code .xml}:
     * {@code application/xml}; {@code .png}, {@code .jpg}/{@code .jpeg}: the image type; else
     * {@code application/octet-stream})
     *
     * @param file the file
     * @param index its position among the {@code --body} options, from 1
     * @throws IOException if it cannot be read or is larger than {@link #MAX_FILE_BYTES}
     */
    public static Probe ofFile(Path file, int index) throws IOException {
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(MAX_FILE_BYTES + 1);
        }
        if (bytes.length > MAX_FILE_BYTES) {
            throw new IOException("larger than " + MAX_FILE_BYTES + " bytes, the contract's largest body");
        }
        String fileName = Objects.toString(file.getFileName(), "");
        return new Probe("body_" + index, "--body " + fileName, contentType(fileName), Body.ofOwned(bytes));
    }

    private static String contentType(String fileName) {
        String n = fileName.toLowerCase(Locale.ROOT);
        int dot = n.lastIndexOf('.');
        return switch (dot < 0 ? "" : n.substring(dot + 1)) {
            case "json" -> "application/json";
            case "txt" -> "text/plain";
            case "xml" -> "application/xml";
            case "png" -> "image/png";
            case "jpg", "jpeg" -> "image/jpeg";
            default -> "application/octet-stream";
        };
    }
}
