package dev.openshell.supervisor.policy;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Exact decisions on the sets of hosts that host patterns match: "is there a host matched by every pattern of
 * {@code all} and by no pattern of {@code none}?", answered with a witness host.
 *
 * <p>The languages are regular, so the question is decidable; it is answered in two levels.
 * <ol>
 *   <li>Labels. What a host label means to a set of patterns is only which of their label globs it matches (its
 *       <em>signature</em>). The realisable signatures are enumerated by a breadth-first search over the joint
 *       position sets of all globs, reading one representative of each character class: every character that
 *       appears literally in some glob is its own class, and all other characters behave alike, so one unused
 *       character stands for them. Each signature keeps the first (shortest) label that realises it.</li>
 *   <li>Hosts. Each pattern is a nondeterministic automaton over signatures ({@code **} loops on any label and then
 *       moves on; a glob label moves on when the signature contains it). A breadth-first search over the tuple of
 *       the patterns' state sets (a subset construction, which the {@code none} patterns need) finds a shortest
 *       word of signatures accepted by every {@code all} pattern and by no {@code none} pattern.</li>
 * </ol>
 * The witness is the concatenation of the labels chosen for that word. Both searches are bounded by
 * {@link #STATE_BUDGET} states each; patterns of any realistic size stay far below it.
 */
final class HostLanguage {
    /** Most states either search may visit before giving up. */
    static final int STATE_BUDGET = 100_000;
    /** Preferred order of characters in witnesses; the first one no glob uses stands for "any other character". */
    private static final String ALPHABET_ORDER = "abcdefghijklmnopqrstuvwxyz0123456789-_:";

    private HostLanguage() {
    }

    /**
     * Finds a host matched by every pattern in {@code all} and by none in {@code none}.
     *
     * @param all at least one pattern
     * @param none patterns the host must not match
     * @return a host with the fewest labels, or empty when there is none
     * @throws IllegalStateException when a search exceeds {@link #STATE_BUDGET}
     */
    static Optional<String> witness(List<HostPattern> all, List<HostPattern> none) {
        if (all.isEmpty()) {
            throw new IllegalArgumentException("at least one pattern must be matched");
        }
        List<HostPattern> patterns = new ArrayList<>(all);
        patterns.addAll(none);
        Map<String, Integer> globIndex = new LinkedHashMap<>();
        int[][] tokens = new int[patterns.size()][];
        for (int p = 0; p < patterns.size(); p++) {
            HostPattern pattern = patterns.get(p);
            tokens[p] = new int[pattern.labelCount()];
            for (int k = 0; k < pattern.labelCount(); k++) {
                String glob = pattern.label(k);
                tokens[p][k] = glob == null ? -1 : globIndex.computeIfAbsent(glob, g -> globIndex.size());
            }
        }
        List<String> globs = new ArrayList<>(globIndex.keySet());
        List<Symbol> symbols = labelSymbols(globs);
        return hostSearch(tokens, all.size(), symbols);
    }

    /** A realisable label signature: the set of globs one label matches, and the shortest such label. */
    private record Symbol(BitSet signature, String label) {
    }

    /** Level 1: every realisable signature of a non-empty label, each with its shortest label. */
    private static List<Symbol> labelSymbols(List<String> globs) {
        char[] alphabet = alphabet(globs);
        int g = globs.size();
        long[] start = new long[g];
        for (int i = 0; i < g; i++) {
            start[i] = closure(1L, globs.get(i));
        }
        Map<BitSet, String> firstLabel = new LinkedHashMap<>();
        Map<Key, Integer> seen = new HashMap<>();
        List<long[]> states = new ArrayList<>();
        List<Integer> parents = new ArrayList<>();
        List<Character> via = new ArrayList<>();
        ArrayDeque<Integer> queue = new ArrayDeque<>();
        // the start state (no character read) is expanded once; only states after at least one character count
        expand(start, -1, alphabet, globs, seen, states, parents, via, queue, firstLabel);
        while (!queue.isEmpty()) {
            int id = queue.poll();
            long[] state = states.get(id);
            if (isDead(state)) {
                continue; // every further character leads back here
            }
            expand(state, id, alphabet, globs, seen, states, parents, via, queue, firstLabel);
        }
        List<Symbol> symbols = new ArrayList<>(firstLabel.size());
        firstLabel.forEach((signature, label) -> symbols.add(new Symbol(signature, label)));
        return symbols;
    }

    private static void expand(long[] state, int id, char[] alphabet, List<String> globs, Map<Key, Integer> seen,
                               List<long[]> states, List<Integer> parents, List<Character> via,
                               ArrayDeque<Integer> queue, Map<BitSet, String> firstLabel) {
        for (char c : alphabet) {
            long[] next = new long[state.length];
            for (int i = 0; i < state.length; i++) {
                next[i] = step(state[i], globs.get(i), c);
            }
            Key key = new Key(next);
            if (seen.containsKey(key)) {
                continue;
            }
            if (states.size() >= STATE_BUDGET) {
                throw new IllegalStateException("host patterns too complex to compare");
            }
            int nextId = states.size();
            seen.put(key, nextId);
            states.add(next);
            parents.add(id);
            via.add(c);
            queue.add(nextId);
            BitSet signature = new BitSet(globs.size());
            for (int i = 0; i < next.length; i++) {
                if ((next[i] & (1L << globs.get(i).length())) != 0) {
                    signature.set(i);
                }
            }
            firstLabel.computeIfAbsent(signature, s -> spell(nextId, parents, via));
        }
    }

    private static String spell(int id, List<Integer> parents, List<Character> via) {
        StringBuilder b = new StringBuilder();
        for (int at = id; at >= 0; at = parents.get(at)) {
            b.append(via.get(at));
        }
        return b.reverse().toString();
    }

    private static boolean isDead(long[] state) {
        for (long positions : state) {
            if (positions != 0) {
                return false;
            }
        }
        return true;
    }

    /** The representative characters: each literal used by some glob, plus one character no glob uses. */
    private static char[] alphabet(List<String> globs) {
        BitSet literal = new BitSet(128);
        for (String glob : globs) {
            for (int i = 0; i < glob.length(); i++) {
                char c = glob.charAt(i);
                if (c != HostPattern.STAR && c != HostPattern.ANY) {
                    literal.set(c);
                }
            }
        }
        StringBuilder out = new StringBuilder();
        boolean freshChosen = false;
        for (int i = 0; i < ALPHABET_ORDER.length(); i++) {
            char c = ALPHABET_ORDER.charAt(i);
            if (literal.get(c)) {
                out.append(c);
            } else if (!freshChosen) {
                out.append(c);
                freshChosen = true;
            }
        }
        if (!freshChosen) {
            out.append('~'); // never a pattern character, so it stands for every unused character
        }
        return out.toString().toCharArray();
    }

    /** Position set of a label glob after reading {@code c}: positions 0..length, bit {@code length} = accept. */
    private static long step(long positions, String glob, char c) {
        long next = 0;
        for (long rest = positions; rest != 0; rest &= rest - 1) {
            int p = Long.numberOfTrailingZeros(rest);
            if (p == glob.length()) {
                continue;
            }
            char t = glob.charAt(p);
            if (t == HostPattern.STAR) {
                next |= 1L << p;
            } else if (t == HostPattern.ANY || t == c) {
                next |= 1L << (p + 1);
            }
        }
        return closure(next, glob);
    }

    /** Adds the positions reachable without reading: past each {@code *}. */
    private static long closure(long positions, String glob) {
        long out = positions;
        for (int p = 0; p < glob.length(); p++) {
            if ((out & (1L << p)) != 0 && glob.charAt(p) == HostPattern.STAR) {
                out |= 1L << (p + 1);
            }
        }
        return out;
    }

    /** Level 2: breadth-first search over the patterns' state sets, reading signatures. */
    private static Optional<String> hostSearch(int[][] tokens, int required, List<Symbol> symbols) {
        int patterns = tokens.length;
        long[] start = new long[2 * patterns];
        for (int p = 0; p < patterns; p++) {
            start[2 * p] = 1L;
        }
        Map<Key, Integer> seen = new HashMap<>();
        List<long[]> states = new ArrayList<>();
        List<Integer> parents = new ArrayList<>();
        List<Integer> via = new ArrayList<>();
        ArrayDeque<Integer> queue = new ArrayDeque<>();
        seen.put(new Key(start), 0);
        states.add(start);
        parents.add(-1);
        via.add(-1);
        queue.add(0);
        while (!queue.isEmpty()) {
            int id = queue.poll();
            long[] state = states.get(id);
            for (int s = 0; s < symbols.size(); s++) {
                long[] next = advance(state, tokens, symbols.get(s).signature());
                if (!alive(next, required)) {
                    continue;
                }
                Key key = new Key(next);
                if (seen.containsKey(key)) {
                    continue;
                }
                if (states.size() >= STATE_BUDGET) {
                    throw new IllegalStateException("host patterns too complex to compare");
                }
                int nextId = states.size();
                seen.put(key, nextId);
                states.add(next);
                parents.add(id);
                via.add(s);
                if (accepts(next, tokens, required)) {
                    List<String> labels = new ArrayList<>();
                    for (int at = nextId; at > 0; at = parents.get(at)) {
                        labels.add(symbols.get(via.get(at)).label());
                    }
                    Collections.reverse(labels);
                    return Optional.of(String.join(".", labels));
                }
                queue.add(nextId);
            }
        }
        return Optional.empty();
    }

    private static long[] advance(long[] state, int[][] tokens, BitSet signature) {
        long[] next = new long[state.length];
        for (int p = 0; p < tokens.length; p++) {
            int[] t = tokens[p];
            for (int k = 0; k < t.length; k++) {
                if (!has(state, p, k)) {
                    continue;
                }
                if (t[k] < 0) {
                    set(next, p, k);
                    set(next, p, k + 1);
                } else if (signature.get(t[k])) {
                    set(next, p, k + 1);
                }
            }
        }
        return next;
    }

    private static boolean alive(long[] state, int required) {
        for (int p = 0; p < required; p++) {
            if (state[2 * p] == 0 && state[2 * p + 1] == 0) {
                return false;
            }
        }
        return true;
    }

    private static boolean accepts(long[] state, int[][] tokens, int required) {
        for (int p = 0; p < tokens.length; p++) {
            boolean accepted = has(state, p, tokens[p].length);
            if (accepted != (p < required)) {
                return false;
            }
        }
        return true;
    }

    private static boolean has(long[] state, int pattern, int position) {
        return (state[2 * pattern + (position >>> 6)] & (1L << (position & 63))) != 0;
    }

    private static void set(long[] state, int pattern, int position) {
        state[2 * pattern + (position >>> 6)] |= 1L << (position & 63);
    }

    /** A state as a hash key with value equality. */
    private record Key(long[] words) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Key other && Arrays.equals(words, other.words);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(words);
        }

        @Override
        public String toString() {
            return Arrays.toString(words);
        }
    }
}
