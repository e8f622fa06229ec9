package dev.openshell.supervisor.cli;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

/**
 * Installs a SIGHUP handler through {@code sun.misc.Signal} (module {@code jdk.unsupported}), the JDK's only signal
 * API, looked up reflectively: a direct reference is a javac warning ("internal proprietary API") that no
 * {@code -Xlint} option or annotation suppresses, and the build compiles with {@code -Werror}.
 */
final class Hangup {

    private Hangup() {
    }

    /**
     * Runs {@code action} on every SIGHUP; the handler returns at once, replacing the JVM's default (exit).
     *
     * @throws IllegalArgumentException when the JVM reserves SIGHUP ({@code -Xrs}), the platform lacks it, or the
     *     process was started with SIGHUP ignored (as {@code nohup} starts it): HotSpot then keeps the signal
     *     ignored and reports the old disposition, {@code SIG_IGN}, instead of installing the handler
     * @throws IllegalStateException when {@code sun.misc.Signal} is not present
     */
    static void onHangup(Runnable action) {
        try {
            Class<?> signal = Class.forName("sun.misc.Signal");
            Class<?> handler = Class.forName("sun.misc.SignalHandler");
            Object hup = signal.getConstructor(String.class).newInstance("HUP");
            Object proxy = Proxy.newProxyInstance(Hangup.class.getClassLoader(), new Class<?>[] {handler},
                    (self, method, args) -> handle(self, method, args, action));
            Object previous = signal.getMethod("handle", signal, handler).invoke(null, hup, proxy);
            if (previous == handler.getField("SIG_IGN").get(null)) {
                throw new IllegalArgumentException("SIGHUP is ignored in this process (it was started with SIGHUP"
                        + " ignored, as nohup does)");
            }
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof IllegalArgumentException refused) {
                throw refused;
            }
            throw new IllegalStateException("SIGHUP handler not installed", e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("sun.misc.Signal is not available", e);
        }
    }

    private static Object handle(Object self, Method method, Object[] args, Runnable action) {
        return switch (method.getName()) {
            case "handle" -> {
                action.run();
                yield null;
            }
            case "hashCode" -> System.identityHashCode(self);
            case "equals" -> self == args[0];
            case "toString" -> "SIGHUP handler";
            default -> throw new UnsupportedOperationException(method.getName());
        };
    }
}
