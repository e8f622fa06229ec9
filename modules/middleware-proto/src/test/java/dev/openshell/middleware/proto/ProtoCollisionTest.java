package dev.openshell.middleware.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import dev.openshell.middleware.proto.v1.MiddlewareProto;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import openshell.published.v1.PublishedMiddlewareProto;
import org.junit.jupiter.api.Test;

/**
 * The wire rule of {@code proto/WIRE.md}: {@code proto/openshell/middleware/v1/middleware.proto} against OpenShell's
 * published {@code supervisor_middleware.proto} (the verbatim copy in
 * {@code tests/data/reference/openshell-proto/}), both compiled by protoc at build time; this test reads their
 * descriptors, never the {@code .proto} text.
 */
class ProtoCollisionTest {
    /** SHA-256 of the published copy, NVIDIA/OpenShell {@code proto/supervisor_middleware.proto} at 2b3e948. */
    private static final String PUBLISHED_SHA256 = "8040c52b52754a86fa22fdf7531ffb33d39daaced22114b9a14366662d1b06f6";
    private static final FileDescriptorProto PUBLISHED = PublishedMiddlewareProto.getDescriptor().toProto();
    private static final FileDescriptorProto OURS = MiddlewareProto.getDescriptor().toProto();
    /** A row of the additions table: {@code | `Definition` | `name` | 1000 | ...}. */
    private static final Pattern ROW = Pattern.compile("^\\|\\s*`(\\w+)`\\s*\\|\\s*`(\\w+)`\\s*\\|\\s*(\\d+)\\s*\\|");

    @Test
    void theProjectProtoMatchesThePublishedOneAndAddsOnlyFrom1000() {
        assertEquals(List.of(), ProtoCollisions.problems(PUBLISHED, OURS));
    }

    @Test
    void thePublishedCopyIsVerbatimWithItsLicenceHeader() throws IOException, NoSuchAlgorithmException {
        Path copy = Paths.get(System.getProperty("supervisor.testdata", "../../tests/data"), "reference",
                "openshell-proto", "supervisor_middleware.proto");
        byte[] bytes = Files.readAllBytes(copy);
        assertTrue(new String(bytes, java.nio.charset.StandardCharsets.UTF_8)
                .startsWith("// SPDX-FileCopyrightText: Copyright (c) 2025-2026 NVIDIA CORPORATION & AFFILIATES. All "
                        + "rights reserved.\n// SPDX-License-Identifier: Apache-2.0\n"));
        assertEquals(PUBLISHED_SHA256, HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes)),
                "the copy must stay byte for byte as published at 2b3e948 (replace it whole, with a new commit, "
                + "in tests/data/README.md)");
        assertEquals("openshell.middleware.v1", PUBLISHED.getPackage());
        assertTrue(PUBLISHED.getServiceList().size() == 2 && PUBLISHED.getMessageTypeCount() > 30,
                "the whole published contract was compiled");
    }

    @Test
    void everyAdditionIsListedInWireMdAndNothingElse() throws IOException {
        Path wire = Paths.get(System.getProperty("supervisor.root", "../.."), "proto", "WIRE.md");
        List<ProtoCollisions.Addition> listed = new ArrayList<>();
        for (String line : Files.readAllLines(wire)) {
            Matcher m = ROW.matcher(line);
            if (m.find()) {
                listed.add(new ProtoCollisions.Addition(m.group(1), m.group(2), Integer.parseInt(m.group(3))));
            }
        }
        List<ProtoCollisions.Addition> found = ProtoCollisions.additions(PUBLISHED, OURS);
        assertEquals(6, found.size(), found::toString);
        assertEquals(sorted(listed), sorted(found), "proto/WIRE.md lists exactly the additions");
    }

    @Test
    void anAdditionBelow1000OrOnAnAnnouncedNumberIsReported() {
        FileDescriptorProto moved = editMessage("MiddlewareBinding", m -> renumber(m, "id", 5));
        List<String> problems = ProtoCollisions.problems(PUBLISHED, moved);
        assertEquals(List.of(
                "MiddlewareBinding adds 'id' = 5, below 1000 (additions to OpenShell's definitions start at 1000, "
                        + "proto/WIRE.md)",
                "MiddlewareBinding field 5 is 'id' TYPE_STRING, but OpenShell has announced it as "
                        + "'http_protocol_version' TYPE_UINT32"), problems);

        FileDescriptorProto phase = OURS.toBuilder().setEnumType(enumIndex("SupervisorMiddlewarePhase"),
                OURS.getEnumType(enumIndex("SupervisorMiddlewarePhase")).toBuilder()
                        .addValue(EnumValueDescriptorProto.newBuilder().setName("SUPERVISOR_MIDDLEWARE_PHASE_X")
                                .setNumber(16))).build();
        assertEquals(List.of("SupervisorMiddlewarePhase adds 'SUPERVISOR_MIDDLEWARE_PHASE_X' = 16, below 1000 "
                + "(additions to OpenShell's definitions start at 1000, proto/WIRE.md)"),
                ProtoCollisions.problems(PUBLISHED, phase));
    }

    @Test
    void aSharedNumberWithAnotherNameOrTypeIsReported() {
        FileDescriptorProto renamed = editMessage("MiddlewareBinding", m -> {
            int i = fieldIndex(m, "max_payload_bytes");
            return m.toBuilder().setField(i, m.getField(i).toBuilder().setName("max_body_bytes")).build();
        });
        assertEquals(List.of("MiddlewareBinding field 3 is 'max_body_bytes' LABEL_OPTIONAL TYPE_UINT64 but published "
                + "as 'max_payload_bytes' LABEL_OPTIONAL TYPE_UINT64"),
                ProtoCollisions.problems(PUBLISHED, renamed));

        FileDescriptorProto retyped = editMessage("HttpRequestTarget", m -> {
            int i = fieldIndex(m, "port");
            return m.toBuilder().setField(i, m.getField(i).toBuilder()
                    .setType(FieldDescriptorProto.Type.TYPE_STRING)).build();
        });
        assertEquals(1, ProtoCollisions.problems(PUBLISHED, retyped).size());
        assertTrue(ProtoCollisions.problems(PUBLISHED, retyped).getFirst()
                .startsWith("HttpRequestTarget field 3 is 'port' LABEL_OPTIONAL TYPE_STRING"));
    }

    @Test
    void aMissingOrChangedPublishedDefinitionIsReported() {
        List<DescriptorProto> without = new ArrayList<>(OURS.getMessageTypeList());
        without.removeIf(m -> m.getName().equals("WebSocketSessionStart"));
        assertTrue(ProtoCollisions.problems(PUBLISHED, OURS.toBuilder().clearMessageType()
                .addAllMessageType(without).build()).contains("message WebSocketSessionStart is published but missing"));

        FileDescriptorProto unreserved = editMessage("HttpResponseEvent", m -> m.toBuilder().clearReservedRange()
                .build());
        assertTrue(ProtoCollisions.problems(PUBLISHED, unreserved).getFirst()
                .startsWith("HttpResponseEvent reserves []"), () -> ProtoCollisions.problems(PUBLISHED, unreserved)
                .toString());

        var service = OURS.getService(0).toBuilder().addMethod(MethodDescriptorProto.newBuilder().setName("Extra")
                .setInputType(".google.protobuf.Empty").setOutputType(".google.protobuf.Empty"));
        List<String> extra = ProtoCollisions.problems(PUBLISHED, OURS.toBuilder().setService(0, service).build());
        assertEquals(1, extra.size());
        assertTrue(extra.getFirst().startsWith("service SupervisorMiddleware has ["), extra.getFirst());

        FileDescriptorProto moved = OURS.toBuilder().setPackage("openshell.middleware.v2").build();
        assertEquals(List.of("proto package openshell.middleware.v2 is not the published openshell.middleware.v1"),
                ProtoCollisions.problems(PUBLISHED, moved));
    }

    private static FileDescriptorProto editMessage(String name, UnaryOperator<DescriptorProto> edit) {
        FileDescriptorProto.Builder b = OURS.toBuilder();
        for (int i = 0; i < b.getMessageTypeCount(); i++) {
            if (b.getMessageType(i).getName().equals(name)) {
                b.setMessageType(i, edit.apply(b.getMessageType(i)));
                return b.build();
            }
        }
        throw new AssertionError("no message " + name);
    }

    private static DescriptorProto renumber(DescriptorProto m, String field, int number) {
        int i = fieldIndex(m, field);
        return m.toBuilder().setField(i, m.getField(i).toBuilder().setNumber(number)).build();
    }

    private static int fieldIndex(DescriptorProto m, String field) {
        for (int i = 0; i < m.getFieldCount(); i++) {
            if (m.getField(i).getName().equals(field)) {
                return i;
            }
        }
        throw new AssertionError("no field " + field);
    }

    private static int enumIndex(String name) {
        for (int i = 0; i < OURS.getEnumTypeCount(); i++) {
            if (OURS.getEnumType(i).getName().equals(name)) {
                return i;
            }
        }
        throw new AssertionError("no enum " + name);
    }

    private static List<ProtoCollisions.Addition> sorted(List<ProtoCollisions.Addition> list) {
        return list.stream().sorted(java.util.Comparator.comparing(ProtoCollisions.Addition::definition)
                .thenComparing(ProtoCollisions.Addition::number)).toList();
    }
}
