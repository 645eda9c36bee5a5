/**
 * Application policy at the Quarkus edge (docs/POLICY.md): how a deployment puts its own rules into the push path
 * without forking the image. {@code WritePolicies} assembles the engine's {@link dev.syncular.server.sync.WritePolicy}
 * from the declarative document {@code syncular.policy.file} ({@code PolicyDocument}: {@code MaxLengthRule},
 * {@code ImmutableWhenRule} — §6.7 row validators; {@code RequireSiblingRule} — a §6.8 whole-commit validator;
 * {@code ReactionRule} — a §6.9 planner), CDI beans of the engine's seams, and the validator webhook
 * ({@code WebhookValidator}, a signed HTTPS §6.8 validator with a hard timeout). {@code ReactionDelivery} is each
 * pod's §6.9 delivery worker: claims with {@code SKIP LOCKED}, renews, posts to the reaction webhook, retries
 * with backoff, dead-letters and prunes terminal rows; {@code ReactionEndpoints} routes each reaction type to its
 * webhook ({@code syncular.reactions.endpoints}, else the default). {@code Webhook} is the signed JSON call both
 * use.
 *
 * <p>Depends on {@code sync} (the seams), {@code storage} (reaction rows), {@code schema}, {@code wire} and
 * {@code config}; the engine never depends on it.
 *
 * <p>Configuration (issue 46: each feature maps its own {@code syncular.*} group): {@code PolicyConfig} ({@code syncular.policy.*}), {@code ReactionsConfig} ({@code syncular.reactions.*}) and the shape both webhooks share, {@code WebhookEndpoint}: bounds checked by constraints, a url's form and secret by each mapping's {@code problems} at start-up.
 */
package dev.syncular.server.policy;
