import Foundation
import KeychainTestSupport
import KeychainModel
import Testing

// keychain-example, an app written with the SecItem API as on Apple platforms, signed with
// `security codesign`: it gets the access groups of its entitlements, and an unsigned copy
// gets its implicit group only.

extension SecurityAPI {
    @Suite struct SignedExampleTests {
        @Test func signedCopiesShareTheirTeamsGroupAndAnUnsignedCopyDoesNot() throws {
            let fixture = try SignedAppsFixture()
            let identity = try fixture.identity(team: "ABCDE12345")
            try fixture.signedApp(
                "one", program: "keychain-example", identity: identity,
                entitlements: #"{"application-identifier": "ABCDE12345.com.example.one", "keychain-access-groups": ["ABCDE12345.com.example.shared", "ABCDE12345.com.example.one"]}"#)
            try fixture.signedApp(
                "two", program: "keychain-example", identity: identity,
                entitlements: #"{"application-identifier": "ABCDE12345.com.example.two", "keychain-access-groups": ["ABCDE12345.com.example.shared"]}"#)
            try fixture.app("plain", program: "keychain-example")

            #expect(try fixture.run("one", "add", "api.example.com", "alice", "s3cret").status == 0, "\(fixture.daemonLog)")
            let found = try fixture.run("one", "find", "api.example.com", "alice")
            #expect(found.group == "ABCDE12345.com.example.shared", "the first keychain-access-group is the default")
            #expect(try fixture.run("one", "add", "api.example.com", "own", "x", "ABCDE12345.com.example.one").status == 0)

            let two = try fixture.run("two", "find", "api.example.com", "alice")
            #expect(two.status == 0 && two.data == "s3cret", "the same team's app with the shared group reads it")
            #expect(try fixture.run("two", "find", "api.example.com", "own").status == OSStatusCode.itemNotFound.rawValue, "but not one's own group")
            #expect(try fixture.run("two", "add", "api.example.com", "x", "x", "ABCDE12345.com.example.one").status == OSStatusCode.missingEntitlement.rawValue)

            #expect(try fixture.run("plain", "find", "api.example.com", "alice").status == OSStatusCode.itemNotFound.rawValue, "unsigned: none of the team's items")
            #expect(try fixture.run("plain", "add", "api.example.com", "x", "x", "ABCDE12345.com.example.shared").status == OSStatusCode.missingEntitlement.rawValue)
            #expect(try fixture.run("plain", "add", "api.example.com", "bob", "y").status == 0)
            #expect(try fixture.run("plain", "find", "api.example.com", "bob").group?.hasPrefix("unsigned.") == true)
            #expect(Set(try fixture.run("one", "list").items) == ["alice@ABCDE12345.com.example.shared", "own@ABCDE12345.com.example.one"])
        }
    }
}
