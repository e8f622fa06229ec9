package dev.openshell.supervisor.it;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Samples of a Prometheus text exposition, as an operator's scraper reads them. */
final class Prometheus {
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})?\\s+(\\S+)$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    /**
     * One sample.
     *
     * @param name the metric name
     * @param labels label names to values
     * @param value the value
     */
    record Sample(String name, Map<String, String> labels, double value) {
    }

    private final List<Sample> samples;

    private Prometheus(List<Sample> samples) {
        this.samples = samples;
    }

    static Prometheus parse(String text) {
        List<Sample> list = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher m = SAMPLE.matcher(line);
            if (!m.matches()) {
                throw new AssertionError("not a Prometheus sample line: " + line);
            }
            Map<String, String> labels = new TreeMap<>();
            if (m.group(2) != null) {
                Matcher l = LABEL.matcher(m.group(2));
                while (l.find()) {
                    labels.put(l.group(1), l.group(2));
                }
            }
            list.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(3))));
        }
        return new Prometheus(list);
    }

    /** {@return the samples of {@code name} whose labels include {@code labels}} */
    List<Sample> find(String name, Map<String, String> labels) {
        return samples.stream().filter(s -> s.name().equals(name))
                .filter(s -> s.labels().entrySet().containsAll(labels.entrySet())).toList();
    }

    /** {@return the value of the one sample of {@code name} with exactly these labels (0 when absent)} */
    double value(String name, Map<String, String> labels) {
        List<Sample> found = samples.stream().filter(s -> s.name().equals(name) && s.labels().equals(labels))
                .toList();
        if (found.size() > 1) {
            throw new AssertionError(found.size() + " samples of " + name + labels);
        }
        return found.isEmpty() ? 0 : found.get(0).value();
    }

    List<Sample> samples() {
        return samples;
    }
}
