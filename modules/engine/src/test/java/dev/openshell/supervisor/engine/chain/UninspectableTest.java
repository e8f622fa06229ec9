package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.internal.StageResult;
import static dev.openshell.supervisor.engine.chain.Stages.chain;
import static dev.openshell.supervisor.engine.chain.Stages.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.openshell.middleware.spi.Finding;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The chain-level rule for uninspectable traffic (RFC 0009, "Operation phases and placement"). */
class UninspectableTest {
    private final Stages.Scripted p = Stages.identity();

    @Test
    void everyStageFailOpenRelaysWithABypassFindingPerStage() {
        UninspectableVerdict v = chain(spec("a", 1, p).open().build(), spec("b", 2, p).open().thirdParty().build())
                .uninspectable("body_over_capacity");
        UninspectableVerdict.Relay relay = assertInstanceOf(UninspectableVerdict.Relay.class, v);
        assertEquals(List.of("a", "b"), relay.stages().stream().map(StageRecord::configKey).toList());
        for (StageRecord r : relay.stages()) {
            assertEquals(StageResult.BYPASSED, r.outcome());
            assertEquals(FailureCategory.UNINSPECTABLE, r.failure().orElseThrow().category());
            assertEquals("body_over_capacity", r.failure().orElseThrow().code());
            assertEquals(List.of(PlatformCodes.FINDING_UNINSPECTABLE_BYPASS),
                    r.findings().stream().map(Finding::type).toList());
        }
        assertEquals(0, p.calls());
    }

    @Test
    void oneFailClosedStageDeniesAndNamesTheFirstSuchStage() {
        UninspectableVerdict v = chain(spec("open", 1, p).open().build(), spec("required", 2, p).build(),
                spec("also-required", 3, p).build()).uninspectable("compressed_body");
        UninspectableVerdict.Deny deny = assertInstanceOf(UninspectableVerdict.Deny.class, v);
        assertEquals("{\"error\":\"middleware_uninspectable\",\"detail\":\"request cannot be inspected by required "
                + "middleware openshell/test\",\"config_key\":\"required\",\"binding_id\":\"openshell/test\","
                + "\"reason_code\":\"compressed_body\"}", deny.response().toJson());
        assertEquals(List.of("required", "also-required"),
                deny.stages().stream().map(StageRecord::configKey).toList());
        assertEquals(List.of(StageResult.FAILED_CLOSED, StageResult.FAILED_CLOSED),
                deny.stages().stream().map(StageRecord::outcome).toList());
    }

    @Test
    void anInvalidCauseIsReplacedByThePlatformDefault() {
        UninspectableVerdict v = chain(spec("a", 1, p).build()).uninspectable("Body Too Big!");
        assertEquals("request_uninspectable",
                assertInstanceOf(UninspectableVerdict.Deny.class, v).response().reasonCode());
    }

    @Test
    void anEmptyChainHasNoUninspectableRule() {
        assertThrows(IllegalStateException.class, () -> Chain.empty().uninspectable("x"));
    }
}
