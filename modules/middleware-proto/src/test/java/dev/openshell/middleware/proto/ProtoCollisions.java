package dev.openshell.middleware.proto;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Compares this project's proto with OpenShell's published one, both as compiled descriptors (protoc's own parse),
 * under the wire rule of {@code proto/WIRE.md}:
 *
 * <ul>
 *   <li>every published message, enum, service and rpc exists in ours under the same full name;</li>
 *   <li>every published field exists in ours with the same number, name, type, label, type name and oneof (the
 *       JSON name follows from the name); every published enum value with the same number and name; every
 *       published reserved number and name is reserved in ours too; every service has exactly the published rpcs
 *       with the same types and streaming;</li>
 *   <li>every field or enum value ours adds to a published definition has a number of {@link #MIN_ADDITION} or more,
 *       a name the published definition does not use, and a number it neither uses nor reserves;</li>
 *   <li>the numbers OpenShell has announced ({@link #ANNOUNCED}) are used, if at all, only as announced.</li>
 * </ul>
 * Definitions only ours has (none today) are free. Comments and file options are not compared.
 */
final class ProtoCollisions {
    /** The smallest number this project may give a field or enum value it adds to a definition of OpenShell's. */
    static final int MIN_ADDITION = 1000;

    /** A field OpenShell has announced but not yet published: only this name and type may take the number. */
    record Announced(String message, int number, String name, Optional<FieldDescriptorProto.Type> type) {
    }

    /**
     * OpenShell's RFC 0009 revision of 2026-09-17: {@code MiddlewareBinding} 5 {@code http_protocol_version}
     * (uint32), 6 {@code supported_http_body_modes}, 104 {@code request_timeout}.
     */
    static final List<Announced> ANNOUNCED = List.of(
            new Announced("MiddlewareBinding", 5, "http_protocol_version",
                    Optional.of(FieldDescriptorProto.Type.TYPE_UINT32)),
            new Announced("MiddlewareBinding", 6, "supported_http_body_modes", Optional.empty()),
            new Announced("MiddlewareBinding", 104, "request_timeout", Optional.empty()));

    /** One of our additions to a published definition: {@code definition} is a message or enum name. */
    record Addition(String definition, String name, int number) {
    }

    private ProtoCollisions() {
    }

    /** {@return every breach of the wire rule, each a sentence naming the definition; empty when there is none} */
    static List<String> problems(FileDescriptorProto published, FileDescriptorProto ours) {
        List<String> out = new ArrayList<>();
        if (!published.getPackage().equals(ours.getPackage())) {
            out.add("proto package " + ours.getPackage() + " is not the published " + published.getPackage());
        }
        Map<String, DescriptorProto> ourMessages = byName(ours.getMessageTypeList(), DescriptorProto::getName);
        for (DescriptorProto p : published.getMessageTypeList()) {
            compareMessage(p.getName(), p, ourMessages.get(p.getName()), out);
        }
        Map<String, EnumDescriptorProto> ourEnums = byName(ours.getEnumTypeList(), EnumDescriptorProto::getName);
        for (EnumDescriptorProto p : published.getEnumTypeList()) {
            compareEnum(p.getName(), p, ourEnums.get(p.getName()), out);
        }
        Map<String, ServiceDescriptorProto> ourServices = byName(ours.getServiceList(), ServiceDescriptorProto::getName);
        for (ServiceDescriptorProto p : published.getServiceList()) {
            compareService(p, ourServices.get(p.getName()), out);
        }
        for (Announced a : ANNOUNCED) {
            DescriptorProto m = ourMessages.get(a.message());
            Optional<FieldDescriptorProto> f = m == null ? Optional.empty()
                    : m.getFieldList().stream().filter(x -> x.getNumber() == a.number()).findFirst();
            if (f.isPresent() && (!f.get().getName().equals(a.name())
                    || a.type().map(t -> t != f.get().getType()).orElse(false))) {
                out.add(a.message() + " field " + a.number() + " is '" + f.get().getName() + "' " + f.get().getType()
                        + ", but OpenShell has announced it as '" + a.name() + "'"
                        + a.type().map(t -> " " + t).orElse(""));
            }
        }
        return out;
    }

    /** {@return every field and enum value ours adds to a published definition (nested ones named Outer.Inner)} */
    static List<Addition> additions(FileDescriptorProto published, FileDescriptorProto ours) {
        List<Addition> out = new ArrayList<>();
        Map<String, DescriptorProto> pub = byName(published.getMessageTypeList(), DescriptorProto::getName);
        for (DescriptorProto o : ours.getMessageTypeList()) {
            if (pub.containsKey(o.getName())) {
                messageAdditions(o.getName(), pub.get(o.getName()), o, out);
            }
        }
        Map<String, EnumDescriptorProto> pubEnums = byName(published.getEnumTypeList(), EnumDescriptorProto::getName);
        for (EnumDescriptorProto o : ours.getEnumTypeList()) {
            if (pubEnums.containsKey(o.getName())) {
                enumAdditions(o.getName(), pubEnums.get(o.getName()), o, out);
            }
        }
        return out;
    }

    private static void messageAdditions(String where, DescriptorProto p, DescriptorProto o, List<Addition> out) {
        Map<Integer, FieldDescriptorProto> pub = byName(p.getFieldList(), FieldDescriptorProto::getNumber);
        for (FieldDescriptorProto f : o.getFieldList()) {
            if (!pub.containsKey(f.getNumber())) {
                out.add(new Addition(where, f.getName(), f.getNumber()));
            }
        }
        Map<String, DescriptorProto> nested = byName(p.getNestedTypeList(), DescriptorProto::getName);
        for (DescriptorProto n : o.getNestedTypeList()) {
            if (nested.containsKey(n.getName())) {
                messageAdditions(where + "." + n.getName(), nested.get(n.getName()), n, out);
            }
        }
        Map<String, EnumDescriptorProto> enums = byName(p.getEnumTypeList(), EnumDescriptorProto::getName);
        for (EnumDescriptorProto e : o.getEnumTypeList()) {
            if (enums.containsKey(e.getName())) {
                enumAdditions(where + "." + e.getName(), enums.get(e.getName()), e, out);
            }
        }
    }

    private static void enumAdditions(String where, EnumDescriptorProto p, EnumDescriptorProto o, List<Addition> out) {
        Map<Integer, EnumValueDescriptorProto> pub = byName(p.getValueList(), EnumValueDescriptorProto::getNumber);
        for (EnumValueDescriptorProto v : o.getValueList()) {
            if (!pub.containsKey(v.getNumber())) {
                out.add(new Addition(where, v.getName(), v.getNumber()));
            }
        }
    }

    private static void compareMessage(String where, DescriptorProto p, DescriptorProto o, List<String> out) {
        if (o == null) {
            out.add("message " + where + " is published but missing");
            return;
        }
        Map<Integer, FieldDescriptorProto> ours = byName(o.getFieldList(), FieldDescriptorProto::getNumber);
        for (FieldDescriptorProto pf : p.getFieldList()) {
            FieldDescriptorProto of = ours.get(pf.getNumber());
            if (of == null) {
                out.add(where + " field " + pf.getNumber() + " ('" + pf.getName() + "') is published but missing");
                continue;
            }
            String got = describe(o, of);
            String want = describe(p, pf);
            if (!got.equals(want)) {
                out.add(where + " field " + pf.getNumber() + " is " + got + " but published as " + want);
            }
        }
        List<String> pubNames = p.getFieldList().stream().map(FieldDescriptorProto::getName).toList();
        List<Integer> pubNumbers = p.getFieldList().stream().map(FieldDescriptorProto::getNumber).toList();
        for (FieldDescriptorProto of : o.getFieldList()) {
            if (pubNumbers.contains(of.getNumber())) {
                continue;
            }
            checkAddition(where, of.getName(), of.getNumber(), pubNames, reserved(p), p.getReservedNameList(), out);
        }
        if (!reserved(o).containsAll(reserved(p)) || !o.getReservedNameList().containsAll(p.getReservedNameList())) {
            out.add(where + " reserves " + reserved(o) + " " + o.getReservedNameList() + ", not the published "
                    + reserved(p) + " " + p.getReservedNameList());
        }
        Map<String, DescriptorProto> nested = byName(o.getNestedTypeList(), DescriptorProto::getName);
        for (DescriptorProto n : p.getNestedTypeList()) {
            compareMessage(where + "." + n.getName(), n, nested.get(n.getName()), out);
        }
        Map<String, EnumDescriptorProto> enums = byName(o.getEnumTypeList(), EnumDescriptorProto::getName);
        for (EnumDescriptorProto e : p.getEnumTypeList()) {
            compareEnum(where + "." + e.getName(), e, enums.get(e.getName()), out);
        }
    }

    private static void compareEnum(String where, EnumDescriptorProto p, EnumDescriptorProto o, List<String> out) {
        if (o == null) {
            out.add("enum " + where + " is published but missing");
            return;
        }
        Map<Integer, EnumValueDescriptorProto> ours = byName(o.getValueList(), EnumValueDescriptorProto::getNumber);
        List<Integer> pubNumbers = new ArrayList<>();
        for (EnumValueDescriptorProto pv : p.getValueList()) {
            pubNumbers.add(pv.getNumber());
            EnumValueDescriptorProto ov = ours.get(pv.getNumber());
            if (ov == null) {
                out.add(where + " value " + pv.getNumber() + " (" + pv.getName() + ") is published but missing");
            } else if (!ov.getName().equals(pv.getName())) {
                out.add(where + " value " + pv.getNumber() + " is " + ov.getName() + " but published as "
                        + pv.getName());
            }
        }
        List<String> pubNames = p.getValueList().stream().map(EnumValueDescriptorProto::getName).toList();
        List<Integer> enumReserved = p.getReservedRangeList().stream()
                .flatMap(r -> IntStream.rangeClosed(r.getStart(), r.getEnd()).boxed()).toList();
        for (EnumValueDescriptorProto ov : o.getValueList()) {
            if (!pubNumbers.contains(ov.getNumber())) {
                checkAddition(where, ov.getName(), ov.getNumber(), pubNames, enumReserved, p.getReservedNameList(),
                        out);
            }
        }
    }

    private static void compareService(ServiceDescriptorProto p, ServiceDescriptorProto o, List<String> out) {
        if (o == null) {
            out.add("service " + p.getName() + " is published but missing");
            return;
        }
        Function<MethodDescriptorProto, String> shape = m -> m.getName() + "(" + (m.getClientStreaming() ? "stream "
                : "") + m.getInputType() + ") returns (" + (m.getServerStreaming() ? "stream " : "")
                + m.getOutputType() + ")";
        List<String> want = p.getMethodList().stream().map(shape).sorted().toList();
        List<String> got = o.getMethodList().stream().map(shape).sorted().toList();
        if (!want.equals(got)) {
            out.add("service " + p.getName() + " has " + got + " but is published with " + want);
        }
    }

    private static void checkAddition(String where, String name, int number, List<String> pubNames,
                                      List<Integer> pubReserved, List<String> pubReservedNames, List<String> out) {
        if (number < MIN_ADDITION) {
            out.add(where + " adds '" + name + "' = " + number + ", below " + MIN_ADDITION
                    + " (additions to OpenShell's definitions start at " + MIN_ADDITION + ", proto/WIRE.md)");
        }
        if (pubNames.contains(name) || pubReservedNames.contains(name)) {
            out.add(where + " adds '" + name + "' = " + number + ", a name the published definition uses or "
                    + "reserves");
        }
        if (pubReserved.contains(number)) {
            out.add(where + " adds '" + name + "' = " + number + ", a number the published definition reserves");
        }
    }

    /** The field's wire shape: everything but comments, in a form that reads well in a failure message. */
    private static String describe(DescriptorProto in, FieldDescriptorProto f) {
        String oneof = f.hasOneofIndex() && !f.getProto3Optional()
                ? " in oneof " + in.getOneofDecl(f.getOneofIndex()).getName() : "";
        return "'" + f.getName() + "' " + f.getLabel() + " " + f.getType()
                + (f.getTypeName().isEmpty() ? "" : " " + f.getTypeName()) + oneof
                + (f.getProto3Optional() ? " optional" : "");
    }

    private static List<Integer> reserved(DescriptorProto m) {
        // reserved ranges are [start, end) for messages
        return m.getReservedRangeList().stream()
                .flatMap(r -> IntStream.range(r.getStart(), r.getEnd()).boxed()).toList();
    }

    private static <K, T> Map<K, T> byName(List<T> items, Function<T, K> key) {
        return items.stream().collect(Collectors.toMap(key, Function.identity(), (a, b) -> a));
    }
}
