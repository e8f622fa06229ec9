package dev.openshell.builtin.regex;

import java.util.Map;

/** Fake secrets in each supported format (none is a real credential). */
final class Samples {
    static final String PEM = "-----BEGIN RSA PRIVATE KEY-----\n"
            + "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
            + "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
            + "-----END RSA PRIVATE KEY-----";
    static final Map<SecretKind, String> ONE_OF_EACH = Map.of(
            SecretKind.PRIVATE_KEY, PEM,
            SecretKind.ANTHROPIC_API_KEY, "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCd",
            SecretKind.OPENAI_API_KEY, "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z_9-Q",
            SecretKind.AWS_ACCESS_KEY_ID, "AKIAIOSFODNN7EXAMPLE",
            SecretKind.GITHUB_TOKEN, "ghp_0123456789abcdefghijABCDEFGHIJ012345",
            SecretKind.SLACK_TOKEN, "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
            SecretKind.GOOGLE_API_KEY, "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI");

    private Samples() {
    }
}
