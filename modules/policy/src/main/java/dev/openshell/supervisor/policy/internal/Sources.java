package dev.openshell.supervisor.policy.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/** Reading configuration files: bounded size, strict UTF-8, problems instead of exceptions. */
public final class Sources {
    /** Largest configuration file read, in bytes (4 MiB). */
    public static final int MAX_FILE_BYTES = 4 * 1024 * 1024;

    private Sources() {
    }

    /**
     * Reads a file as strict UTF-8.
     *
     * @param file the file
     * @param problems where a failure is recorded (as an error without line)
     * @return the text, or the empty string after an error
     */
    public static String read(Path file, Problems problems) {
        try {
            if (Files.isDirectory(file)) {
                problems.error(problems.nowhere(), KeyPath.root(), "cannot read the file: it is a directory");
                return "";
            }
            long size = Files.size(file);
            if (size > MAX_FILE_BYTES) {
                problems.error(problems.nowhere(), KeyPath.root(), "the file is " + size
                        + " bytes; the limit is " + MAX_FILE_BYTES + " bytes");
                return "";
            }
            byte[] bytes = Files.readAllBytes(file);
            try {
                return StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(bytes)).toString();
            } catch (CharacterCodingException e) {
                problems.error(problems.nowhere(), KeyPath.root(), "the file is not valid UTF-8");
                return "";
            }
        } catch (NoSuchFileException e) {
            problems.error(problems.nowhere(), KeyPath.root(), "cannot read the file: it does not exist");
        } catch (AccessDeniedException e) {
            problems.error(problems.nowhere(), KeyPath.root(), "cannot read the file: permission denied");
        } catch (IOException e) {
            problems.error(problems.nowhere(), KeyPath.root(), "cannot read the file ("
                    + e.getClass().getSimpleName() + ")");
        }
        return "";
    }

    /**
     * Records an error when text is longer than {@link #MAX_FILE_BYTES} can hold.
     *
     * @param text the text
     * @param problems where the error goes
     */
    public static void checkLength(String text, Problems problems) {
        if (text.length() > MAX_FILE_BYTES) {
            problems.error(problems.nowhere(), KeyPath.root(), "the text is " + text.length()
                    + " characters; the limit is " + MAX_FILE_BYTES);
        }
    }

    /**
     * {@return {@code text} without a leading byte-order mark}
     *
     * @param text the text
     */
    public static String stripBom(String text) {
        return text.startsWith("\uFEFF") ? text.substring(1) : text;
    }
}
