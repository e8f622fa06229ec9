package dev.openshell.supervisor.runtime;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.fields;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import dev.openshell.supervisor.proxy.PolicySteps;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The boundaries of the exchange pipeline ({@code docs/proxy.md}, "The exchange pipeline"), checked on the compiled
 * main classes of every module: the proxy reads no runtime, engine or policy type; only the proxy's {@code Pipeline}
 * calls the policy steps; no {@link ThreadLocal} holds request or audit state; no mutable static on the request path.
 */
class PipelineArchitectureTest {
    /** The step types whose methods only the pipeline calls. */
    private static final Set<Class<?>> STEPS = Set.of(PolicySteps.Admit.class, PolicySteps.Plan.class,
            PolicySteps.L7.class, PolicySteps.RequestChain.class, PolicySteps.Credentials.class,
            PolicySteps.Audit.class);
    private static final String PIPELINE = "dev.openshell.supervisor.proxy.internal.Pipeline";

    private static JavaClasses main;

    @BeforeAll
    static void importMainClasses() throws Exception {
        Path root = Path.of(System.getProperty("supervisor.root"));
        List<Path> dirs;
        try (Stream<Path> modules = Stream.concat(Files.list(root.resolve("modules")), Files.list(root.resolve(
                "plugins")))) {
            dirs = modules.map(m -> m.resolve("target/classes")).filter(Files::isDirectory).toList();
        }
        main = new ClassFileImporter().importPaths(dirs);
    }

    @Test
    void theProxyReadsNoRuntimeEngineOrPolicyType() {
        ArchRule rule = noClasses().that().resideInAPackage("dev.openshell.supervisor.proxy..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.openshell.supervisor.runtime..",
                        "dev.openshell.supervisor.engine..", "dev.openshell.supervisor.policy..",
                        "dev.openshell.supervisor.l7..", "dev.openshell.supervisor.audit..",
                        "dev.openshell.supervisor.grpc..", "dev.openshell.supervisor.cli..");
        rule.check(main);
    }

    @Test
    void onlyThePipelineCallsAPolicyStep() {
        // a step's own bridge method (the erased signature calling the typed one) is the step, not a caller
        DescribedPredicate<JavaMethodCall> stepCall = DescribedPredicate.describe("a call of a policy step",
                call -> !call.getOrigin().getModifiers().contains(JavaModifier.BRIDGE)
                        && STEPS.stream().anyMatch(step -> call.getTargetOwner().isAssignableTo(step)
                        && call.getTarget().getName().equals(stepMethod(step))));
        ArchRule rule = noClasses().that().doNotHaveFullyQualifiedName(PIPELINE)
                .and().doNotHaveFullyQualifiedName(PolicySteps.class.getName())
                .should().callMethodWhere(stepCall);
        rule.check(main);
    }

    @Test
    void noThreadLocalHoldsState() {
        noClasses().that().resideInAPackage("dev.openshell..")
                .should().dependOnClassesThat().areAssignableTo(ThreadLocal.class)
                .because("request and audit state travels with the exchange (ThreadLocalRandom is not a ThreadLocal)")
                .check(main);
    }

    @Test
    void noMutableStaticOnTheRequestPath() {
        fields().that().areStatic().and().areDeclaredInClassesThat().resideInAnyPackage(
                        "dev.openshell.supervisor.proxy..", "dev.openshell.supervisor.runtime..")
                // off the request path: SupervisorProxy.prepare() runs once per process, before any request; generation
                // numbers are drawn when a policy generation is prepared (start-up and reload)
                .and().doNotHaveFullName("dev.openshell.supervisor.proxy.SupervisorProxy.PREPARED")
                .and().doNotHaveFullName("dev.openshell.supervisor.runtime.Generation.COUNTER")
                .should().beFinal()
                .andShould().notHaveRawType(DescribedPredicate.describe("a mutable concurrency type",
                        t -> t.getPackageName().equals("java.util.concurrent.atomic")
                                || t.isAssignableTo(java.util.concurrent.ExecutorService.class)))
                .check(main);
    }

    /** {@return the one abstract method of a step type} */
    private static String stepMethod(Class<?> step) {
        return java.util.Arrays.stream(step.getMethods())
                .filter(m -> java.lang.reflect.Modifier.isAbstract(m.getModifiers())).findFirst().orElseThrow()
                .getName();
    }
}
