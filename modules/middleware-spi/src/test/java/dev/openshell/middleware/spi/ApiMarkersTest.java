package dev.openshell.middleware.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.apiguardian.api.API;
import org.junit.jupiter.api.Test;

/**
 * The stability markers (apiguardian {@code @API}, as in JUnit 5): every public type of the exported package carries
 * one, and so does every member a plugin calls or implements that a type-level marker does not cover by itself (the
 * static factories, the constructors other than a record's canonical one, and the methods of the interfaces plugins
 * implement). The packages exported only to the supervisor are {@code INTERNAL} throughout.
 */
class ApiMarkersTest {
    private static final String PACKAGE = "dev.openshell.middleware.spi";

    @Test
    void everyPublicTypeOfTheExportedPackageCarriesApiWithAVersion() throws Exception {
        List<Class<?>> types = publicTypes(PACKAGE);
        assertTrue(types.size() >= 25, "found the package's types: " + types);
        List<String> missing = new ArrayList<>();
        for (Class<?> c : types) {
            API api = c.getAnnotation(API.class);
            if (api == null || !api.since().matches("0\\.[1-9][0-9]*")) {
                missing.add(c.getName());
            }
        }
        assertEquals(List.of(), missing, "public types without @API(since = \"0.<minor>\")");
    }

    @Test
    void everyFactoryConstructorAndImplementedMethodCarriesApi() throws Exception {
        List<String> missing = new ArrayList<>();
        for (Class<?> c : publicTypes(PACKAGE)) {
            List<Executable> members = new ArrayList<>();
            for (Constructor<?> k : c.getDeclaredConstructors()) {
                if (Modifier.isPublic(k.getModifiers()) && !isCanonical(c, k)) {
                    members.add(k);
                }
            }
            for (Method m : c.getDeclaredMethods()) {
                boolean factory = Modifier.isStatic(m.getModifiers()) && !(c.isEnum()
                        && (m.getName().equals("values") || m.getName().equals("valueOf")));
                if (Modifier.isPublic(m.getModifiers()) && !m.isSynthetic() && (factory || c.isInterface())) {
                    members.add(m);
                }
            }
            for (Executable e : members) {
                if (e.getAnnotation(API.class) == null) {
                    missing.add(c.getSimpleName() + "." + e.getName() + Arrays.toString(e.getParameterTypes()));
                }
            }
        }
        assertEquals(List.of(), missing, "members plugins call or implement without @API");
    }

    @Test
    void theQualifiedExportsAreInternal() throws Exception {
        for (String p : List.of(PACKAGE + ".host", PACKAGE + ".net", PACKAGE + ".internal")) {
            List<Class<?>> types = publicTypes(p);
            assertTrue(!types.isEmpty(), p);
            for (Class<?> c : types) {
                API api = c.getAnnotation(API.class);
                assertTrue(api != null && api.status() == API.Status.INTERNAL, c.getName() + " is @API INTERNAL");
            }
        }
    }

    @Test
    void hostOnlyMembersOfTheContractAreMarkedInternal() throws Exception {
        assertEquals(API.Status.INTERNAL, Body.class.getMethod("sink").getAnnotation(API.class).status());
        assertEquals(API.Status.INTERNAL, Phase.class.getField("POST_CREDENTIALS").getAnnotation(API.class).status());
        assertEquals(API.Status.STABLE, MiddlewareProvider.class.getAnnotation(API.class).status());
    }

    /** Public top-level and member types of {@code pkg}, read from the compiled classes of this module. */
    private static List<Class<?>> publicTypes(String pkg) throws IOException, URISyntaxException,
            ClassNotFoundException {
        Path root = Path.of(MiddlewareProvider.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Path dir = root.resolve(pkg.replace('.', '/'));
        List<Class<?>> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".class")).sorted().toList()) {
                String name = f.getFileName().toString().replace(".class", "");
                if (name.equals("package-info")) {
                    continue;
                }
                Class<?> c = Class.forName(pkg + "." + name, false, MiddlewareProvider.class.getClassLoader());
                if (Modifier.isPublic(c.getModifiers()) && !c.isAnonymousClass() && !c.isLocalClass()
                        && !c.isSynthetic() && (c.getEnclosingClass() == null
                        || Modifier.isPublic(c.getEnclosingClass().getModifiers()))) {
                    out.add(c);
                }
            }
        }
        return out;
    }

    private static boolean isCanonical(Class<?> c, Constructor<?> k) {
        return c.isRecord() && Arrays.equals(k.getParameterTypes(), Arrays.stream(c.getRecordComponents())
                .map(r -> r.getType()).toArray(Class<?>[]::new));
    }
}
