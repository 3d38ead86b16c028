@testable import KeychainCallers
import KeychainModel
import KeychainProtocol
@testable import KeychainServer
import Testing

/// Every rule of the System keychain's policy, without processes: root and the daemon's
/// own user do what they do in a keychain of their own; any other user reads certificates
/// of the System keychain itself and nothing else; a user's own keychain is not concerned.
@Suite struct SystemKeychainPolicyTests {
    static let system = DaemonScope.system(owner: 0)
    static let certificates: [String: KeychainValue] = [QueryKey.itemClass: .string(ItemClass.certificate.rawValue)]

    static func caller(uid: UInt32) -> Caller {
        Caller(pid: 1234, uid: uid, executable: "/usr/bin/app", code: .unsigned(reason: "test"), role: .application, accessGroups: AccessGroups(["test.group"]))
    }

    static func status<Request: ServiceRequest>(_ request: Request, uid: UInt32, scope: DaemonScope = system) -> OSStatusCode? {
        do {
            try SystemKeychainPolicy.admit(request, from: caller(uid: uid), scope: scope)
            return nil
        } catch let error as KeychainError {
            return error.status
        } catch {
            return OSStatusCode.io
        }
    }

    @Test func rootAndTheOwnerAreAdmittedToEverything() {
        let owner = DaemonScope.system(owner: 990)
        for uid: UInt32 in [0, 990] {
            #expect(Self.status(Service.Add([QueryKey.itemClass: .string("genp")]), uid: uid, scope: owner) == nil)
            #expect(Self.status(Service.CopyMatching([QueryKey.itemClass: .string("genp")]), uid: uid, scope: owner) == nil)
            #expect(Self.status(Service.CopyProfiles(), uid: uid, scope: owner) == nil)
            #expect(!SystemKeychainPolicy.readsPublicCertificates(Self.caller(uid: uid), scope: owner))
        }
    }

    @Test func anotherUserReadsCertificatesOfTheSystemKeychainOnly() {
        #expect(SystemKeychainPolicy.readsPublicCertificates(Self.caller(uid: 1000), scope: Self.system))
        #expect(Self.status(Service.CopyMatching(Self.certificates), uid: 1000) == nil)
        #expect(Self.status(Service.CopyMatching([QueryKey.itemClass: .string("genp")]), uid: 1000) == OSStatusCode.interactionNotAllowed)
        #expect(Self.status(Service.CopyMatching([QueryKey.itemClass: .string("keys")]), uid: 1000) == OSStatusCode.interactionNotAllowed)
        var searchList = Self.certificates
        searchList[QueryKey.matchSearchList] = .array([.string("/home/user/other.keychain")])
        #expect(Self.status(Service.CopyMatching(searchList), uid: 1000) == OSStatusCode.interactionNotAllowed)
        var named = Self.certificates
        named[QueryKey.useKeychain] = .string("/home/user/other.keychain")
        #expect(Self.status(Service.CopyMatching(named), uid: 1000) == OSStatusCode.interactionNotAllowed)
        #expect(Self.status(Service.CopyProfiles(), uid: 1000) == OSStatusCode.interactionNotAllowed)
    }

    /// Whatever is not a read it knows is root's, including requests added after the rule.
    @Test func everythingElseIsRefusedAsRootsToChange() {
        #expect(Self.status(Service.Add(Self.certificates), uid: 1000) == OSStatusCode.wrPerm)
        #expect(Self.status(Service.Delete(Self.certificates), uid: 1000) == OSStatusCode.wrPerm)
        #expect(Self.status(Service.Update(Self.certificates, attributes: [:]), uid: 1000) == OSStatusCode.wrPerm)
    }

    @Test func aUsersOwnKeychainIsNotConcerned() {
        #expect(Self.status(Service.Add(Self.certificates), uid: 1000, scope: .user) == nil)
        #expect(!SystemKeychainPolicy.readsPublicCertificates(Self.caller(uid: 1000), scope: .user))
    }
}
