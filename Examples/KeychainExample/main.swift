import Foundation
import Security

// keychain-example: a command-line app written as it would be on macOS or iOS, with the
// SecItem API. The same file compiles against Apple's Security framework; on Linux it
// runs against Trousseau. Sign a copy with `security codesign` and it gets the access
// groups of its entitlements; unsigned, it gets its implicit group.
//
//   keychain-example add SERVICE ACCOUNT SECRET [GROUP]
//   keychain-example update SERVICE ACCOUNT SECRET [GROUP]
//   keychain-example find SERVICE ACCOUNT [GROUP]     prints the item's group and secret
//   keychain-example delete SERVICE ACCOUNT [GROUP]
//   keychain-example list                             every generic password it can see
//
// --synchronizable (before the command) makes the item one iCloud Keychain would sync
// (kSecAttrSynchronizable) and reaches only such items; --this-device-only adds it as
// AfterFirstUnlockThisDeviceOnly, which never leaves the device.
//
// The first line printed is always "status=<OSStatus>", then Apple's message on failure.

func report(_ status: OSStatus) {
    print("status=\(status)")
    if status != errSecSuccess, let message = SecCopyErrorMessageString(status, nil) {
        print("message=\(message as String)")
    }
}

var arguments = CommandLine.arguments.dropFirst().map { $0 }
let synchronizable = arguments.first == "--synchronizable"
if synchronizable { arguments.removeFirst() }
let thisDeviceOnly = arguments.first == "--this-device-only"
if thisDeviceOnly { arguments.removeFirst() }

func itemQuery(service: String, account: String, group: String?) -> [String: Any] {
    var query: [String: Any] = [
        kSecClass as String: kSecClassGenericPassword,
        kSecAttrService as String: service,
        kSecAttrAccount as String: account,
        kSecUseDataProtectionKeychain as String: true,
    ]
    if let group { query[kSecAttrAccessGroup as String] = group }
    if synchronizable { query[kSecAttrSynchronizable as String] = kCFBooleanTrue }
    return query
}

switch (arguments.first, arguments.count) {
case ("add", 4...5):
    var query = itemQuery(service: arguments[1], account: arguments[2], group: arguments.count == 5 ? arguments[4] : nil)
    query[kSecValueData as String] = arguments[3].data(using: .utf8)!
    query[kSecAttrAccessible as String] = thisDeviceOnly ? kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly : kSecAttrAccessibleAfterFirstUnlock
    report(SecItemAdd(query as CFDictionary, nil))

case ("update", 4...5):
    let query = itemQuery(service: arguments[1], account: arguments[2], group: arguments.count == 5 ? arguments[4] : nil)
    let changes = [kSecValueData as String: arguments[3].data(using: .utf8)!]
    report(SecItemUpdate(query as CFDictionary, changes as CFDictionary))

case ("find", 3...4):
    var query = itemQuery(service: arguments[1], account: arguments[2], group: arguments.count == 4 ? arguments[3] : nil)
    query[kSecReturnAttributes as String] = kCFBooleanTrue
    query[kSecReturnData as String] = kCFBooleanTrue
    query[kSecMatchLimit as String] = kSecMatchLimitOne
    var result: CFTypeRef?
    let status = SecItemCopyMatching(query as CFDictionary, &result)
    report(status)
    if status == errSecSuccess, let item = result as? [String: Any] {
        print("group=\(item[kSecAttrAccessGroup as String] as? String ?? "")")
        let secret = item[kSecValueData as String] as? Data ?? Data()
        print("data=\(String(data: secret, encoding: .utf8) ?? "")")
    }

case ("delete", 3...4):
    report(SecItemDelete(itemQuery(service: arguments[1], account: arguments[2], group: arguments.count == 4 ? arguments[3] : nil) as CFDictionary))

case ("list", 1):
    let query: [String: Any] = [
        kSecClass as String: kSecClassGenericPassword,
        kSecReturnAttributes as String: true,
        kSecMatchLimit as String: kSecMatchLimitAll,
    ]
    var result: CFTypeRef?
    let status = SecItemCopyMatching(query as CFDictionary, &result)
    report(status == errSecItemNotFound ? errSecSuccess : status)
    for item in result as? [[String: Any]] ?? [] {
        print("\(item[kSecAttrAccount as String] as? String ?? "")@\(item[kSecAttrAccessGroup as String] as? String ?? "")")
    }

default:
    print(
        "usage: keychain-example [--synchronizable] [--this-device-only] add SERVICE ACCOUNT SECRET [GROUP] | update SERVICE ACCOUNT SECRET [GROUP]"
            + " | find SERVICE ACCOUNT [GROUP] | delete SERVICE ACCOUNT [GROUP] | list")
    exit(2)
}
