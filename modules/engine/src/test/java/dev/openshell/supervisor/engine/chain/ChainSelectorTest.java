package dev.openshell.supervisor.engine.chain;

import static dev.openshell.supervisor.engine.chain.Stages.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ChainSelectorTest {
    private final Stages.Scripted p = Stages.identity();

    @Test
    void selectionFiltersByHostAndSortsByAscendingOrder() {
        ChainSelector selector = ChainSelector.of(List.of(
                spec("export-traces", 30, p).hosts("api.example.com").open().build(),
                spec("regex-redactor", 10, p).hosts("api.example.com", "www.example.com").build(),
                spec("anonymize", 20, p).hosts("api.example.com").build(),
                spec("other", -5, p).hosts("other.example.com").build()));
        assertEquals(List.of("regex-redactor", "anonymize", "export-traces"),
                selector.select("api.example.com").stages().stream().map(StageSpec::configKey).toList());
        assertEquals(List.of("regex-redactor"),
                selector.select("www.example.com").stages().stream().map(StageSpec::configKey).toList());
        assertEquals(List.of("other", "regex-redactor", "anonymize", "export-traces"),
                selector.specs().stream().map(StageSpec::configKey).toList());
    }

    @Test
    void aRequestMatchingNothingGetsTheSharedEmptyChain() {
        ChainSelector selector = ChainSelector.of(List.of(spec("a", 1, p).hosts("api.example.com").build()));
        Chain chain = selector.select("trusted.example.com");
        assertSame(Chain.empty(), chain);
        assertTrue(chain.isEmpty());
        assertFalse(chain.requiresBody());
        assertEquals(0, chain.bodyBufferLimit());
        assertSame(Chain.empty(), ChainSelector.of(List.of()).select("anything"));
    }

    @Test
    void theBufferLimitIsTheLargestStageLimit() {
        Chain chain = ChainSelector.of(List.of(spec("a", 1, p).maxBody(1024).build(),
                spec("b", 2, p).maxBody(65_536).build(), spec("c", 3, p).maxBody(0).build())).select("h");
        assertTrue(chain.requiresBody());
        assertEquals(65_536, chain.bodyBufferLimit());
    }

    @Test
    void duplicateConfigKeysAndOrdersAreRefused() {
        assertThrows(IllegalArgumentException.class,
                () -> ChainSelector.of(List.of(spec("a", 1, p).build(), spec("a", 2, p).build())));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ChainSelector.of(List.of(spec("a", 1, p).build(), spec("b", 1, p).build())));
        assertEquals("order 1 is used by more than one config (second: 'b')", e.getMessage());
    }

    @Test
    void moreThanTenMatchingStagesAreRefusedAtRuntime() {
        List<StageSpec> specs = new ArrayList<>();
        for (int i = 0; i < 11; i++) {
            specs.add(spec("k" + i, i, p).hosts(i < 10 ? new String[] {"ten.example", "eleven.example"}
                    : new String[] {"eleven.example"}).build());
        }
        ChainSelector selector = ChainSelector.of(specs);
        Chain ten = selector.select("ten.example");
        assertFalse(ten.refused());
        assertTrue(ten.refusal().isEmpty());
        Chain eleven = selector.select("eleven.example");
        assertTrue(eleven.refused());
        assertEquals(11, eleven.size());
        assertFalse(eleven.requiresBody());
        assertEquals(0, eleven.bodyBufferLimit());
        assertEquals("chain_stage_count_over_capacity", eleven.refusal().orElseThrow().reasonCode());
        assertThrows(IllegalStateException.class, () -> eleven.uninspectable("body_over_capacity"));
    }

    @Test
    void specsCheckTheirRanges() {
        assertThrows(IllegalArgumentException.class, () -> spec("a", 1, p).timeout(9).build());
        assertThrows(IllegalArgumentException.class, () -> spec("a", 1, p).timeout(30_001).build());
        assertThrows(IllegalArgumentException.class, () -> spec("a", 1, p).maxBody(-1).build());
        assertThrows(IllegalArgumentException.class, () -> spec("", 1, p).build());
        assertThrows(IllegalArgumentException.class, () -> spec("a\nb", 1, p).build());
        String printed = spec("a", 1, p).config(Stages.json("{\"token\":\"s3cret\"}")).build().toString();
        assertFalse(printed.contains("s3cret"), printed);
        assertInstanceOf(String.class, printed);
    }
}
