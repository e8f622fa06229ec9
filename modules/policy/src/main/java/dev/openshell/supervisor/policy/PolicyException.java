package dev.openshell.supervisor.policy;

import java.util.Objects;

import org.eclipse.collections.api.list.ImmutableList;

/**
 * A sandbox policy or gateway configuration was rejected. It carries every problem found in the file, not just the
 * first: all errors are reported at once (issue 3), together with the warnings found on the way.
 *
 * <p>The message lists the errors, one per line, in the form of {@link ConfigProblem#describe()}; it never contains
 * untrusted detail.
 */
public class PolicyException extends RuntimeException {
    /** Serialisation version. */
    private static final long serialVersionUID = 1L;
    /** Most errors spelled out in the exception message; {@link #errors()} always has all of them. */
    private static final int MAX_IN_MESSAGE = 50;

    private final String file;
    private final transient ImmutableList<ConfigProblem> problems;

    /**
     * Creates the exception.
     *
     * @param file the file name as given to the loader
     * @param problems the problems found, at least one of them an error
     * @throws IllegalArgumentException if no problem is an error
     */
    public PolicyException(String file, ImmutableList<ConfigProblem> problems) {
        super(summary(file, problems));
        this.file = Objects.requireNonNull(file, "file");
        this.problems = problems;
        if (problems.noneSatisfy(ConfigProblem::isError)) {
            throw new IllegalArgumentException("a PolicyException needs at least one error");
        }
    }

    private static String summary(String file, ImmutableList<ConfigProblem> problems) {
        ImmutableList<ConfigProblem> errors = problems.select(ConfigProblem::isError);
        StringBuilder b = new StringBuilder(file).append(": ").append(errors.size())
                .append(errors.size() == 1 ? " error" : " errors");
        errors.take(MAX_IN_MESSAGE).forEach(e -> b.append(System.lineSeparator()).append("  ").append(e.describe()));
        if (errors.size() > MAX_IN_MESSAGE) {
            b.append(System.lineSeparator()).append("  ... and ").append(errors.size() - MAX_IN_MESSAGE)
                    .append(" more");
        }
        return b.toString();
    }

    /** {@return the file name as given to the loader} */
    public String file() {
        return file;
    }

    /** {@return every problem, errors and warnings, in file order} */
    public ImmutableList<ConfigProblem> problems() {
        return problems;
    }

    /** {@return the errors, in file order; never empty} */
    public ImmutableList<ConfigProblem> errors() {
        return problems.select(ConfigProblem::isError);
    }

    /** {@return the warnings, in file order} */
    public ImmutableList<ConfigProblem> warnings() {
        return problems.reject(ConfigProblem::isError);
    }
}
