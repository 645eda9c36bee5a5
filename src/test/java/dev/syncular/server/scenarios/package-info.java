/**
 * The server side of the SPEC's Appendix B conformance scenarios, one test class per scenario
 * ({@code AppendixB<nn><Name>Test}), each test named after the lettered case it covers ({@code B20a_…}), through the
 * running app: real HTTP rounds ({@code POST /sync}, segment and blob routes) and real sockets (§8), the production
 * engine on PostgreSQL. The scenarios are written for client and server pairs; these tests send what the scenario's
 * clients send ({@code testsupport.SyncTestClient}, {@code testsupport.RealtimeSocket}) and check what the server
 * must answer. Where a case is purely client-side the test checks the server behaviour the client relies on and says
 * so; where the SPEC leaves the server's answer open the test's comment records the decision and its section.
 *
 * <p>Every class runs on {@code testsupport.ScenarioAppProfile} (the notes schema, scopes from the test's
 * {@code testsupport.GrantTable}) unless its comment names another profile; {@link
 * dev.syncular.server.scenarios.ScenarioServer} gives each test a partition of its own. Scenarios 1–10, which only
 * push and pull, stay in {@code sync.SyncScenariosContract}, run over HTTP ({@code http.HttpSyncScenariosTest}),
 * in-process ({@code sync.EngineSyncScenariosTest}) and with S3 segments ({@code http.S3SegmentsHttpScenariosTest}).
 * docs/CONFORMANCE.md maps every scenario and lettered case to its test.
 */
package dev.syncular.server.scenarios;
