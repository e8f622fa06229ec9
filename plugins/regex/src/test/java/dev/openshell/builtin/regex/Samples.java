package dev.openshell.builtin.regex;

import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;

/** Fake secrets in the seven formats the built-in has always known (none is a real credential). */
final class Samples {
    static final String PEM = "-----BEGIN RSA PRIVATE KEY-----\n"
            + "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
            + "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
            + "-----END RSA PRIVATE KEY-----";
    /** The seven ids, in catalog order. */
    static final List<String> LEGACY_IDS = List.of("private_key", "anthropic_api_key", "openai_api_key",
            "aws_access_key_id", "github_token", "slack_token", "google_api_key");
    static final Map<String, String> ONE_OF_EACH = Map.of(
            "private_key", PEM,
            "anthropic_api_key", "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCd",
            "openai_api_key", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z_9-Q",
            "aws_access_key_id", "AKIAIOSFODNN7EXAMPLE",
            "github_token", "ghp_0123456789abcdefghijABCDEFGHIJ012345",
            "slack_token", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
            "google_api_key", "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI");

    private Samples() {
    }

    /** {@return {@code [REDACTED:<id>]}} @param id an id */
    static String placeholder(String id) {
        return "[REDACTED:" + id + "]";
    }

    /** {@return one sample of each legacy kind written on one line (every kind but {@code private_key})} */
    static Arbitrary<String> oneLineLegacyKeys() {
        return Arbitraries.of(LEGACY_IDS).filter(k -> !k.equals("private_key")).map(ONE_OF_EACH::get);
    }
}
