package dev.openshell.middleware.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import dev.openshell.middleware.proto.v1.HttpRequestResult;
import dev.openshell.middleware.proto.v1.MiddlewareProto;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewareGrpc;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Reads the wire-compatibility table in {@code tests/data/conformance/wire-compat.md} in place and checks every field
 * number, type and enum value of the generated descriptors against it.
 */
class WireCompatibilityTest {
    private static final FileDescriptor FILE = MiddlewareProto.getDescriptor();
    private static final Pattern ROW = Pattern.compile("^\\|\\s*`(\\w+)`\\s*\\|(.*)\\|\\s*$");
    private static final Pattern NUMBER = Pattern.compile("(?<![\\w.])(\\d+)(?![\\w.])");
    /** {@code `NAME` 1} or {@code (2 is the published[, reserved] `NAME`}. */
    private static final Pattern ENUM_VALUE =
            Pattern.compile("`([\\w.]+)`\\s+(\\d+)|\\((\\d+) is the published[^`]*`(\\w+)`");
    private static final Pattern TICKED = Pattern.compile("`([^`]+)`");

    static Path wireCompat() {
        String shared = System.getProperty("supervisor.testdata", "../../tests/data");
        Path p = Paths.get(shared, "conformance", "wire-compat.md");
        assertTrue(Files.isRegularFile(p), "conformance file missing: " + p.toAbsolutePath()
                + " (kept in the repository under tests/data)");
        return p;
    }

    @TestFactory
    List<DynamicTest> everyTabledFieldAndEnumValueKeepsItsNumberAndType() throws IOException {
        List<DynamicTest> tests = new ArrayList<>();
        for (String line : Files.readAllLines(wireCompat())) {
            Matcher row = ROW.matcher(line);
            if (!row.matches()) {
                continue;
            }
            String name = row.group(1);
            String cells = row.group(2);
            Descriptor message = FILE.findMessageTypeByName(name);
            EnumDescriptor enumType = FILE.findEnumTypeByName(name);
            assertTrue(message != null || enumType != null, "no message or enum named " + name);
            if (enumType != null) {
                Matcher v = ENUM_VALUE.matcher(cells);
                while (v.find()) {
                    tests.add(v.group(1) != null ? enumCheck(enumType, v.group(1), Integer.parseInt(v.group(2)))
                            : enumCheck(enumType, v.group(4), Integer.parseInt(v.group(3))));
                }
                continue;
            }
            for (String item : cells.split(";|,(?![^<]*>)(?=\\s*[`(])")) {
                String text = item.replace("*", "").trim();
                if (!text.isEmpty()) {
                    tests.addAll(fieldChecks(message, text));
                }
            }
        }
        assertTrue(tests.size() > 60, "expected the whole table to be read, got " + tests.size() + " checks");
        return tests;
    }

    private static List<DynamicTest> fieldChecks(Descriptor message, String item) {
        List<DynamicTest> out = new ArrayList<>();
        if (item.startsWith("oneof")) {
            Matcher m = Pattern.compile("`(\\w+)`\\s+(\\d+)").matcher(item);
            while (m.find()) {
                String field = m.group(1);
                int number = Integer.parseInt(m.group(2));
                out.add(DynamicTest.dynamicTest(message.getName() + "." + field + " = " + number + " (oneof)", () -> {
                    FieldDescriptor f = message.findFieldByNumber(number);
                    assertNotNull(f, "field " + number);
                    assertEquals(field, f.getName());
                    assertNotNull(f.getContainingOneof(), "in a oneof");
                }));
            }
            return out;
        }
        Matcher n = NUMBER.matcher(item);
        assertTrue(n.find(), "no field number in '" + item + "'");
        int number = Integer.parseInt(n.group(1));
        String before = item.substring(0, n.start());
        String after = item.substring(n.end()).replaceAll("[()]", "").trim();
        String type;
        if (item.startsWith("(")) {
            Matcher taken = Pattern.compile("taken:\\s*(\\w+)").matcher(item);
            type = taken.find() ? taken.group(1) : "string";
        } else {
            type = after.isEmpty() ? "" : after.split("\\s+(?![^<]*>)")[0];
            if (type.equals("repeated")) {
                type = "repeated " + after.split("\\s+")[1];
            }
        }
        Matcher tick = TICKED.matcher(item.startsWith("(") ? item : before);
        String expectedName = tick.find() ? tick.group(1) : null;
        String label = message.getName() + "." + (expectedName == null ? "#" + number : expectedName) + " = "
                + number + " " + type;
        String finalType = type;
        out.add(DynamicTest.dynamicTest(label, () -> {
            FieldDescriptor f = message.findFieldByNumber(number);
            assertNotNull(f, "field number " + number + " missing from " + message.getName());
            if (expectedName != null) {
                assertEquals(expectedName, f.getName(), "field " + number + " name");
            }
            assertType(f, finalType);
        }));
        return out;
    }

    private static void assertType(FieldDescriptor f, String type) {
        if (type.isEmpty()) {
            return; // the table gives only the name and number for this field
        }
        if (type.startsWith("map<")) {
            assertTrue(f.isMapField(), f.getName() + " is a map");
            return;
        }
        boolean repeated = type.startsWith("repeated ");
        assertEquals(repeated, f.isRepeated(), f.getName() + " repeated");
        String t = repeated ? type.substring("repeated ".length()) : type;
        switch (t) {
            case "string" -> assertEquals(FieldDescriptor.Type.STRING, f.getType(), f.getName());
            case "bytes" -> assertEquals(FieldDescriptor.Type.BYTES, f.getType(), f.getName());
            case "bool" -> assertEquals(FieldDescriptor.Type.BOOL, f.getType(), f.getName());
            case "uint32" -> assertEquals(FieldDescriptor.Type.UINT32, f.getType(), f.getName());
            case "uint64" -> assertEquals(FieldDescriptor.Type.UINT64, f.getType(), f.getName());
            case "enum" -> assertEquals(FieldDescriptor.Type.ENUM, f.getType(), f.getName());
            default -> {
                if (f.getType() == FieldDescriptor.Type.ENUM) {
                    assertEquals(t, f.getEnumType().getName(), f.getName());
                } else {
                    assertEquals(FieldDescriptor.Type.MESSAGE, f.getType(), f.getName());
                    String actual = t.contains(".") ? f.getMessageType().getFullName() : f.getMessageType().getName();
                    assertEquals(t, actual, f.getName());
                }
            }
        }
    }

    private static DynamicTest enumCheck(EnumDescriptor e, String name, int number) {
        String suffix = name.replace("...", "");
        return DynamicTest.dynamicTest(e.getName() + " " + suffix + " = " + number, () -> {
            EnumValueDescriptor v = e.findValueByNumber(number);
            assertNotNull(v, e.getName() + " value " + number);
            assertTrue(v.getName().endsWith(suffix), v.getName() + " ends with " + suffix);
        });
    }

    @Test
    void serviceHasTheRpcsOfThePublishedContract() {
        var service = FILE.findServiceByName("SupervisorMiddleware");
        assertEquals("openshell.middleware.v1.SupervisorMiddleware", service.getFullName());
        assertEquals(List.of("Describe", "ValidateConfig", "EvaluateHttpRequest", "EvaluateWebSocketSession"),
                service.getMethods().stream().map(m -> m.getName()).toList());
        assertEquals("openshell.middleware.v1.SupervisorMiddleware", SupervisorMiddlewareGrpc.SERVICE_NAME);
    }

    @Test
    void hasBodyDistinguishesKeepFromEmptyReplacementOnTheWire() throws Exception {
        HttpRequestResult keep = HttpRequestResult.newBuilder().build();
        HttpRequestResult empty = HttpRequestResult.newBuilder().setHasBody(true).setBody(ByteString.EMPTY).build();
        assertFalse(HttpRequestResult.parseFrom(keep.toByteArray()).getHasBody());
        assertTrue(HttpRequestResult.parseFrom(empty.toByteArray()).getHasBody());
    }
}
