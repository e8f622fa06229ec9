package dev.openshell.supervisor.audit;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The members every event repeats between {@code time} and {@code metadata} ({@code category_uid} to
 * {@code severity}: about 300 bytes), rendered once per class, activity and severity and then copied as bytes. Only
 * the three classes {@link OcsfEvents} writes, activities 0 to 99, are kept (at most 1,200 heads); any other head is
 * rendered for its event. Thread-safe; a head rendered twice by a race is the same bytes.
 */
final class EventHeads {
    private static final int ACTIVITIES = 100;
    private static final int SEVERITIES = Severity.values().length;

    /** A rendered head and the names it was rendered with. */
    private record Head(String categoryName, String className, String activityName, byte[] members) {
    }

    private final AtomicReferenceArray<Head> heads = new AtomicReferenceArray<>(3 * ACTIVITIES * SEVERITIES);

    /**
     * {@return the members {@code category_uid} to {@code severity}, as {@link JsonText#raw} writes them}
     *
     * @param category the category UID
     * @param categoryName its name
     * @param classUid the class UID
     * @param className its name
     * @param activity the activity ID
     * @param activityName its name
     * @param severity the severity
     */
    byte[] head(int category, String categoryName, int classUid, String className, int activity,
                String activityName, Severity severity) {
        int slot = switch (classUid) {
            case OcsfEvents.HTTP_ACTIVITY -> 0;
            case OcsfEvents.DETECTION_FINDING -> 1;
            case OcsfEvents.DEVICE_CONFIG_STATE_CHANGE -> 2;
            default -> -1;
        };
        if (slot < 0 || activity < 0 || activity >= ACTIVITIES) {
            return render(category, categoryName, classUid, className, activity, activityName, severity);
        }
        int i = (slot * ACTIVITIES + activity) * SEVERITIES + severity.ordinal();
        Head h = heads.get(i);
        if (h == null || !h.activityName().equals(activityName) || !h.className().equals(className)
                || !h.categoryName().equals(categoryName)) {
            h = new Head(categoryName, className, activityName,
                    render(category, categoryName, classUid, className, activity, activityName, severity));
            heads.set(i, h);
        }
        return h.members();
    }

    private static byte[] render(int category, String categoryName, int classUid, String className, int activity,
                                 String activityName, Severity severity) {
        return new JsonText(384).add("category_uid", category).add("category_name", categoryName)
                .add("class_uid", classUid).add("class_name", className)
                .add("activity_id", activity).add("activity_name", activityName)
                .add("type_uid", classUid * 100L + activity).add("type_name", className + ": " + activityName)
                .add("severity_id", severity.id()).add("severity", severity.caption())
                .member();
    }
}
