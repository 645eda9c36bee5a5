/**
 * The server side of the SPEC's Appendix B conformance scenarios that have no other home: one test class per scenario
 * ({@code AppendixB<nn><Name>Test}: 7, 11 (a, b), 18, 20, 21, 22), each test named after the lettered case it covers
 * ({@code B20a_…}), through the running app — real HTTP rounds ({@code POST /sync}, segment and blob routes) and
 * real sockets (§8), the production engine on PostgreSQL. The scenarios are written for client and server pairs;
 * these tests send what the scenario's clients send ({@code testsupport.SyncTestClient},
 * {@code testsupport.RealtimeSocket}) and check what the server must answer. Where a case is purely client-side the
 * test checks the server behaviour the client relies on and says so; where the SPEC leaves the server's answer open
 * the test's comment records the decision and its section.
 *
 * <p>Every class here runs on {@code testsupport.ScenarioAppProfile} (the notes schema, scopes from the test's
 * {@code testsupport.GrantTable}); {@link dev.syncular.server.scenarios.ScenarioServer} gives each test a partition
 * of its own. The other scenarios stay with the tests of their binding or profile, named the same way: 1–6, 8–10 and
 * 19 in {@code sync.SyncScenariosContract} (run over HTTP by {@code http.HttpSyncScenariosTest}, in-process and with
 * S3 segments), 12 and 13 in {@code http}, 14, 15 and 12 (b) on the conformance host ({@code conformance}), 11 (c, d),
 * 16 and 17 in {@code realtime}. docs/CONFORMANCE.md maps every scenario and lettered case to its test.
 */
package dev.syncular.server.scenarios;
