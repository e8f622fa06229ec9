package dev.openshell.builtin.regex;

import java.util.concurrent.CancellationException;

/**
 * The scan's answer to its thread's interrupt: the supervisor interrupts a stage that has run for its timeout
 * (chain-engine.md, "Stage deadlines"), and the body readings and the scanner check the interrupt status every
 * {@value #STRIDE} bytes they read, so a costly body (4 MB dense with references, read in several ways) stops near
 * the deadline instead of running for seconds past it. The stage then fails with the timeout, per its
 * {@code on_error}; nothing it read is forwarded unread under {@code fail_closed}.
 *
 * <p>The interrupt status is left set: whoever interrupted clears it.
 */
final class Interrupts {
    /** How many bytes a loop reads between two checks: 64 KiB. */
    static final int STRIDE = 64 * 1024;

    private Interrupts() {
    }

    /**
     * Throws when the current thread is interrupted.
     *
     * @throws CancellationException when it is; the message names the rule, never content
     */
    static void check() {
        if (Thread.currentThread().isInterrupted()) {
            throw new CancellationException("the scan was interrupted at the stage's deadline");
        }
    }

    /**
     * {@return the position of the next check after position {@code at}, having checked now} For loops that check
     * as {@code if (i >= next) next = Interrupts.checkAt(i);}.
     *
     * @param at the position now
     * @throws CancellationException when the current thread is interrupted
     */
    static int checkAt(int at) {
        check();
        return at + STRIDE;
    }
}
