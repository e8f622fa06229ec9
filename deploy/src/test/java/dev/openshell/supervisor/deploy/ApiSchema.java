package dev.openshell.supervisor.deploy;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Offline validation of rendered manifests against the Kubernetes API types: fabric8's kubernetes-model (Java types
 * generated from the Kubernetes OpenAPI schemas, and from cert-manager's and the Prometheus Operator's CRDs).
 *
 * <p>A document is valid when its {@code apiVersion}/{@code kind} is a known type, it deserialises into that type
 * without coercing scalars (a string where an integer belongs is an error), and no object anywhere in it carries a
 * field its schema does not declare: fabric8 keeps undeclared fields in each object's {@code additionalProperties}
 * rather than failing, so every object of the tree is visited and each such field is reported with its path (the
 * strict field validation {@code kubectl apply --validate=strict} asks of the API server).
 */
final class ApiSchema {
    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_NUMBERS_FOR_ENUMS)
            .build();

    private ApiSchema() {
    }

    /**
     * Validates one document.
     *
     * @param document the document as parsed YAML (maps, lists, scalars)
     * @return the typed resource
     * @throws IllegalArgumentException naming the document and every problem found
     */
    static HasMetadata validate(Map<String, Object> document) {
        String id = document.get("kind") + "/" + nameOf(document);
        KubernetesResource typed;
        try {
            typed = MAPPER.convertValue(document, KubernetesResource.class);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(id + ": " + e.getMessage(), e);
        }
        if (typed instanceof GenericKubernetesResource || !(typed instanceof HasMetadata resource)) {
            throw new IllegalArgumentException(id + ": no schema for apiVersion " + document.get("apiVersion")
                    + " kind " + document.get("kind"));
        }
        List<String> unknown = new ArrayList<>();
        visit(typed, "", unknown);
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException(id + ": unknown field(s) " + String.join(", ", unknown));
        }
        return resource;
    }

    private static String nameOf(Map<String, Object> document) {
        return document.get("metadata") instanceof Map<?, ?> m ? String.valueOf(m.get("name")) : "(no metadata)";
    }

    /** Walks the model objects below {@code node}, collecting the paths of fields no schema declares. */
    private static void visit(Object node, String path, List<String> unknown) {
        if (node == null) {
            return;
        }
        if (node instanceof Collection<?> items) {
            int i = 0;
            for (Object item : items) {
                visit(item, path + "[" + i++ + "]", unknown);
            }
            return;
        }
        if (node instanceof Map<?, ?> map) {
            for (Map.Entry<?, ?> e : map.entrySet()) {
                visit(e.getValue(), path + "." + e.getKey(), unknown);
            }
            return;
        }
        if (!node.getClass().getName().startsWith("io.fabric8.")) {
            return;
        }
        for (Method m : node.getClass().getMethods()) {
            if (m.getParameterCount() != 0 || Modifier.isStatic(m.getModifiers())
                    || m.getDeclaringClass() == Object.class) {
                continue;
            }
            String name = m.getName();
            Object value;
            try {
                if (name.equals("getAdditionalProperties")) {
                    if (m.invoke(node) instanceof Map<?, ?> extra) {
                        extra.keySet().forEach(k -> unknown.add(path + "." + k));
                    }
                    continue;
                }
                if (!name.startsWith("get") || name.length() == 3) {
                    continue;
                }
                value = m.invoke(node);
            } catch (IllegalAccessException | InvocationTargetException e) {
                continue;
            }
            if (value instanceof Collection<?> || value instanceof Map<?, ?>
                    || (value != null && value.getClass().getName().startsWith("io.fabric8."))) {
                String field = Character.toLowerCase(name.charAt(3)) + name.substring(4);
                visit(value, path + "." + field, unknown);
            }
        }
    }
}
