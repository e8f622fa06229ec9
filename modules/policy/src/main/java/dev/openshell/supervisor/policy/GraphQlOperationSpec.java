package dev.openshell.supervisor.policy;

import java.util.Objects;
import java.util.Optional;

import org.eclipse.collections.api.list.ImmutableList;

/**
 * A persisted GraphQL operation as the policy registers it ({@code graphql_persisted_queries.<hash-or-id>}): when a
 * request names a persisted query by hash or id alone, this is the operation the rules are evaluated on.
 *
 * @param operationType {@code query}, {@code mutation} or {@code subscription}, lower case
 * @param operationName the operation name, if registered
 * @param fields the root field names
 */
public record GraphQlOperationSpec(String operationType, Optional<String> operationName, ImmutableList<String> fields) {
    /** Checks the components. @throws NullPointerException if any is {@code null} */
    public GraphQlOperationSpec {
        Objects.requireNonNull(operationType, "operationType");
        Objects.requireNonNull(operationName, "operationName");
        Objects.requireNonNull(fields, "fields");
    }
}
