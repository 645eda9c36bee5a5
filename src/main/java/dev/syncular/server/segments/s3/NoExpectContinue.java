package dev.syncular.server.segments.s3;

import io.quarkus.runtime.annotations.RegisterForReflection;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.SdkHttpRequest;

/**
 * Drops the SDK's {@code Expect: 100-continue} from PUTs below 1 MiB. For the small conditional record writes
 * of {@link S3SegmentStore} the handshake is a pure extra round trip, and a server that answers {@code 412}
 * before the body (some S3-compatible stores do) may surface as a dropped connection instead of the precondition
 * failure. Registered through {@code quarkus.s3.interceptors}.
 */
@RegisterForReflection
public final class NoExpectContinue implements ExecutionInterceptor {
    private static final long THRESHOLD = 1L << 20;

    @Override
    public SdkHttpRequest modifyHttpRequest(Context.ModifyHttpRequest context, ExecutionAttributes attributes) {
        SdkHttpRequest request = context.httpRequest();
        if (request.firstMatchingHeader("Expect").isEmpty()) {
            return request;
        }
        long length =
                context.requestBody().flatMap(b -> b.optionalContentLength()).orElse(Long.MAX_VALUE);
        return length < THRESHOLD ? request.toBuilder().removeHeader("Expect").build() : request;
    }
}
