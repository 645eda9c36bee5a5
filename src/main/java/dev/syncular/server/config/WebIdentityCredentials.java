package dev.syncular.server.config;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * Workload identity for the S3 client ({@code quarkus.s3.aws.credentials.type=default}, the chart's
 * {@code s3.credentials.source=default}): on EKS the ServiceAccount's {@code eks.amazonaws.com/role-arn}
 * annotation gives the pod {@code AWS_ROLE_ARN} and {@code AWS_WEB_IDENTITY_TOKEN_FILE}, and the SDK's default
 * chain exchanges the token through STS. It loads that provider from the {@code sts} module by name, so the
 * class is registered here for a native image (the JVM finds it on the class path).
 */
@RegisterForReflection(
        classNames = "software.amazon.awssdk.services.sts.internal.StsWebIdentityCredentialsProviderFactory",
        methods = true)
public final class WebIdentityCredentials {
    private WebIdentityCredentials() {}
}
