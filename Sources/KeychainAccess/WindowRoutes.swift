import Crypto
import FoundationEssentials
import HTTPTypes
public import Hummingbird
import KeychainCertificates
import KeychainModel
import KeychainProtocol

/// The window's pages and actions. Pages are GETs that change nothing; every change is a POST
/// the ``AccessGuard`` let through (own origin, synchronizer token), answered with a 303 back
/// to a page, or JSON for the page's script (a reveal, an import). Errors are shown as
/// Apple's messages for their OSStatus.
public struct WindowRoutes: Sendable {
    let session: AccessSession
    let directory: KeychainDirectory
    let activity: WindowActivity

    public init(session: AccessSession, directory: KeychainDirectory, activity: WindowActivity) {
        self.session = session
        self.directory = directory
        self.activity = activity
    }

    public func router() -> Router<WindowRequestContext> {
        let router = Router(context: WindowRequestContext.self)
        router.add(middleware: AccessGuard(session: session, activity: activity))
        router.get("/") { request, _ in page(request, view: .list) }
        router.get("/item/:id") { request, context in page(request, view: .item(try context.parameters.require("id"))) }
        router.get("/item/:id/edit") { request, context in page(request, view: .edit(try context.parameters.require("id"))) }
        router.get("/new") { request, _ in page(request, view: .new(request.uri.queryParameters["kind"] == "note")) }
        router.get("/import") { request, _ in page(request, view: .importer) }
        router.get("/profiles") { request, _ in page(request, view: .profiles) }
        router.get("/activity") { request, _ in page(request, view: .activity) }
        router.get("/health") { request, _ in page(request, view: .health(nil)) }
        router.post("/health") { request, _ in try await checkHealth(request) }
        router.post("/items") { request, _ in try await save(request, id: nil) }
        router.post("/item/:id") { request, context in try await save(request, id: try context.parameters.require("id")) }
        router.post("/item/:id/delete") { request, context in try await delete(request, id: try context.parameters.require("id")) }
        router.post("/item/:id/trust") { request, context in try await setTrust(request, id: try context.parameters.require("id")) }
        router.post("/item/:id/export") { request, context in try await export(request, id: try context.parameters.require("id")) }
        router.post("/reveal") { request, _ in try await reveal(request) }
        router.post("/lock") { request, _ in try await lock(request, unlock: false) }
        router.post("/unlock") { request, _ in try await lock(request, unlock: true) }
        router.post("/settings") { request, _ in try await saveSettings(request) }
        router.post("/profiles/remove") { request, _ in try await removeProfile(request) }
        router.post("/import") { request, _ in try await importFile(request) }
        router.get("/assets/:name") { _, context in try WindowAssets.response(for: try context.parameters.require("name")) }
        return router
    }

    enum View {
        case list, item(String), edit(String), new(Bool), importer, profiles, activity, health(HealthReport?)

        /// Whether the page lists or reads the keychain's items (the others need not decrypt them).
        var showsItems: Bool {
            switch self {
            case .list, .item, .edit, .health: true
            case .new, .importer, .profiles, .activity: false
            }
        }
    }

    // MARK: Pages

    func page(_ request: Request, view: View, notice: String? = nil, error: KeychainError? = nil) -> Response {
        let keychains = directory.keychains()
        let keychainID = request.uri.queryParameters["keychain"].map(String.init) ?? "login"
        let current = keychains.first { $0.id == keychainID } ?? keychains[0]
        let category = ItemCategory(rawValue: request.uri.queryParameters["category"].map(String.init) ?? "") ?? .all
        var context: [String: Any] = [
            "csrf": session.csrf, "keychainID": current.id, "keychainName": current.name, "title": current.name,
            "generation": "", "run": session.run,
            "keychains": keychains.map { keychain -> [String: Any] in
                ["id": keychain.id, "name": keychain.name, "current": keychain.id == current.id, "category": category.rawValue,
                 "state": !keychain.available ? "not running" : keychain.locked.map { $0 ? "locked" : "unlocked" } ?? (keychain.isReadOnly ? "read-only" : "unavailable")]
            },
            "categories": ItemCategory.allCases.map { ["id": $0.rawValue, "title": $0.title, "current": $0 == category] },
        ]
        if let locked = current.locked {
            let settings = current.settings
            context["keychain"] = [
                "id": current.id, "name": current.name, "locked": locked, "unlocked": !locked, "minutes": settings.autoLockSeconds / 60,
                "isFile": current.isFile, "lockOnSleep": settings.lockOnSleep,
            ]
        }
        var notice = notice ?? request.uri.queryParameters["notice"].map(String.init)
        var failure = error
        // Read (with the sidebar) before the items: a write in between shows as a change, never as none.
        let changes = keychains[0].changeCount ?? 0
        let items: [WindowItem]
        do throws(KeychainError) {
            items = current.locked == true || !view.showsItems ? [] : try directory.items(in: current)
        } catch {
            items = []
            failure = failure ?? error
        }
        switch view {
        case .list:
            let shown = items.filter { $0.belongs(to: category) }.sorted { $0.name.localizedStandardCompare($1.name) == .orderedAscending }
            if current.locked != true { context["list"] = ["items": shown.map { listRow($0, keychainID: current.id) }, "count": shown.count] }
            context["title"] = category.title
        case .item(let id), .edit(let id):
            guard let item = items.first(where: { $0.id == id }) else {
                failure = failure ?? KeychainError(status: .itemNotFound)
                context["list"] = ["items": [[String: Any]](), "count": 0]
                break
            }
            context["title"] = item.name
            if case .edit = view {
                context["editor"] = editor(for: item, keychainID: current.id)
            } else {
                context["item"] = detail(item, keychain: current, others: items.compactMap(\.certificate))
            }
        case .new(let isNote):
            context["title"] = isNote ? "New Secure Note" : "New Password Item"
            context["editor"] = [
                "action": "/items", "heading": isNote ? "New Secure Note" : "New Password Item", "isNote": isNote, "isNew": true,
                "kind": isNote ? "note" : "password", "name": "", "account": "", "comment": "", "cancel": "/?keychain=\(current.id)",
            ]
        case .importer:
            context["title"] = "Import Items"
            context["importer"] = true
        case .profiles:
            context["title"] = "Profiles"
            do throws(KeychainError) {
                context["profiles"] = ["installed": try directory.profiles().map(profileEntry)]
            } catch {
                failure = failure ?? error
            }
        case .activity:
            context["title"] = "Activity"
            do throws(KeychainError) {
                context["activity"] = [
                    "events": try directory.activity().map { event -> [String: Any] in
                        [
                            "time": WindowItem.format(Date(timeIntervalSince1970: TimeInterval(event.time))), "request": event.request,
                            "program": event.program, "pid": event.pid, "result": KeychainError.appleMessage(for: OSStatusCode(rawValue: event.status)),
                        ]
                    }
                ]
            } catch {
                failure = failure ?? error
            }
        case .health(let report):
            context["title"] = "Keychain Health"
            let report = report ?? HealthReport(items: items, secrets: nil)
            context["health"] = [
                "needsPasscode": !report.checkedSecrets,
                "findings": report.findings.map { finding -> [String: Any] in
                    ["title": finding.title, "entries": finding.entries.map { ["id": $0.id, "name": $0.name, "detail": $0.detail] }]
                },
                "healthy": report.findings.isEmpty && report.checkedSecrets,
            ]
            if report.checkedSecrets, notice == nil { notice = "Checked \(report.checkedCount) passwords." }
        }
        if let notice { context["notice"] = notice }
        if let failure { context["error"] = Self.describe(failure) }
        // A page a POST rendered (a refused change) must not reload itself: that would post again.
        context["generation"] = request.method == .post ? "" : LiveState.generation(of: keychains, changes: changes)
        return html(WindowTemplates.render(context))
    }

    func listRow(_ item: WindowItem, keychainID: String) -> [String: Any] {
        let modified = item.modified.map(WindowItem.format) ?? ""
        return [
            "id": item.id, "name": item.name, "kind": item.kind, "modified": modified, "keychain": item.keychain, "keychainID": keychainID,
            "search": [item.name, item.kind, item.attributes[SecName.kSecAttrAccount]?.stringValue ?? "",
                       item.attributes[SecName.kSecAttrService]?.stringValue ?? "", item.attributes[SecName.kSecAttrServer]?.stringValue ?? ""]
                .joined(separator: " ").lowercased(),
        ]
    }

    /// - Parameter others: the keychain's certificates, intermediates for a certificate's chain.
    func detail(_ item: WindowItem, keychain: WindowKeychain, others: [Data]) -> [String: Any] {
        var detail: [String: Any] = [
            "id": item.id, "name": item.name, "kind": item.kind, "keychain": item.keychain, "hasSecret": item.hasSecret,
            "noun": item.isNote ? "note" : "password", "readOnly": keychain.isReadOnly,
            "attributes": item.attributeRows.map { ["name": $0.name, "value": $0.value] },
            "group": item.accessGroup.isEmpty ? "—" : item.accessGroup, "protection": item.protection.isEmpty ? "—" : item.protection,
            "synchronizable": item.attributes[SecName.kSecAttrSynchronizable]?.boolValue == true ? "yes" : "no",
            "controls": item.accessControl,
        ]
        if let scope = item.secretServiceScope { detail["scope"] = scope }
        if let der = item.certificate, let fields = try? CertificateFields(der: Array(der)) {
            let trust = directory.trust(of: der)
            let evaluation = directory.evaluate(der, others: others)
            // Keychain Access's hierarchy: the root first, this certificate last.
            let chain = (evaluation?.chain ?? [der]).reversed().map { link -> [String: Any] in
                let fields = try? CertificateFields(der: Array(link))
                return ["name": fields?.subjectSummary ?? "a certificate that cannot be read", "this": link == der]
            }
            let verdict =
                evaluation.map { $0.status == .success ? "This certificate is valid" : Self.describe(KeychainError(status: $0.status, message: $0.message)) }
                ?? "This certificate could not be evaluated"
            detail["certificate"] = [
                "subject": fields.subjectSummary ?? "", "issuer": fields.issuer.attributes.compactMap(\.value).joined(separator: ", "),
                "serial": Hexadecimal.string(fields.serialNumber), "notBefore": WindowItem.format(fields.notValidBefore),
                "notAfter": WindowItem.format(fields.notValidAfter),
                "publicKey": (fields.isRSA == true ? "RSA" : "elliptic curve") + (fields.publicKeySizeInBits.map { ", \($0) bits" } ?? ""),
                "sha256": Self.grouped(Hexadecimal.string(SHA256.hash(data: der))),
                "sha1": Self.grouped(Hexadecimal.string(Insecure.SHA1.hash(data: der))),
                "names": fields.alternativeDNSNames + fields.alternativeEmails,
                "choices": TrustChoice.allCases.map { ["value": $0.rawValue, "title": $0.title, "selected": $0 == trust.overall] },
                "policies": CertificateTrust.policies.map { policy -> [String: Any] in
                    let chosen = trust.policies[policy.name] ?? .systemDefaults
                    return [
                        "name": policy.name, "title": policy.title,
                        "choices": TrustChoice.allCases.map { ["value": $0.rawValue, "title": $0 == .systemDefaults ? "no value specified" : $0.title, "selected": $0 == chosen] },
                    ]
                },
                "kept": trust.kept.isEmpty ? [] : [trust.kept.count], "trusted": evaluation?.status == .success, "verdict": verdict, "chain": chain,
                "formats": ExportFormat.allCases.filter { $0 != .p12 || item.hasPrivateKey }.map { ["value": $0.rawValue, "title": $0.title] },
                "hasPrivateKey": item.hasPrivateKey,
            ]
        }
        return detail
    }

    func editor(for item: WindowItem, keychainID: String) -> [String: Any] {
        [
            "action": "/item/\(item.id)", "heading": "Edit “\(item.name)”", "isNote": item.isNote, "isNew": false,
            "kind": item.isNote ? "note" : "password", "name": item.name,
            "account": item.attributes[SecName.kSecAttrAccount]?.stringValue ?? "",
            "comment": item.attributes[SecName.kSecAttrComment]?.stringValue ?? "",
            "cancel": "/item/\(item.id)?keychain=\(keychainID)",
        ]
    }

    func profileEntry(_ profile: ProfileRecord) -> [String: Any] {
        let verification: String =
            switch profile.verification {
            case .unsigned: "not signed"
            case .verified: "signed by \(profile.signer ?? "a trusted signer"), verified"
            case .unverified: "signed by \(profile.signer ?? "an unknown signer"), not verified"
            }
        return [
            "name": profile.displayName ?? profile.identifier, "identifier": profile.identifier, "organization": profile.organization as Any,
            "verification": verification, "installed": WindowItem.format(profile.installationDate),
            "payloads": profile.payloads.map { ["title": $0.displayName ?? $0.identifier, "type": $0.type, "items": $0.items] },
        ]
    }

    // MARK: Actions

    func save(_ request: Request, id: String?) async throws -> Response {
        let form = try await fields(request)
        let keychain = try keychain(form.value("keychain"))
        let isNote = form.value("kind") == "note"
        guard let name = form.value("name") else {
            return page(request, view: id.map { .edit($0) } ?? .new(isNote), error: KeychainError(status: .param, message: "the item needs a name"))
        }
        // The label is the name shown; the service (a generic password's, part of its primary
        // key, the owning app's name for it) is set on adding only.
        var attributes: [String: KeychainValue] = [SecName.kSecAttrLabel: .string(name)]
        attributes[SecName.kSecAttrComment] = .string(form.value("comment") ?? "")
        if !isNote { attributes[SecName.kSecAttrAccount] = .string(form.value("account") ?? "") }
        if let secret = form.secret("secret") { attributes[QueryKey.valueData] = .data(secret.withUnsafeBytes { Data($0) }) }
        do throws(KeychainError) {
            if let id {
                try directory.update(id, in: keychain, attributes: attributes, passcode: form.secret("passcode"))
                return Response.redirect(to: "/item/\(id)?keychain=\(keychain.id)&notice=Saved.", type: .normal)
            }
            guard attributes[QueryKey.valueData] != nil else { throw KeychainError(status: .param, message: "the item needs a \(isNote ? "note" : "password")") }
            attributes[QueryKey.itemClass] = .string(SecName.kSecClassGenericPassword)
            attributes[SecName.kSecAttrService] = .string(name)
            if isNote {
                attributes[SecName.kSecAttrType] = .number(WindowItem.noteType)
                attributes[SecName.kSecAttrDescription] = .string("secure note")
                attributes[SecName.kSecAttrAccount] = .string("")
            }
            try directory.add(attributes, in: keychain, passcode: form.secret("passcode"))
            return Response.redirect(to: "/?keychain=\(keychain.id)&category=\(isNote ? "notes" : "passwords")&notice=Added%20%E2%80%9C\(Self.percent(name))%E2%80%9D.", type: .normal)
        } catch {
            return page(Self.with(request, keychain: keychain.id), view: id.map { .edit($0) } ?? .new(isNote), error: error)
        }
    }

    func delete(_ request: Request, id: String) async throws -> Response {
        let form = try await fields(request)
        let keychain = try keychain(form.value("keychain"))
        guard form.value("confirm") == "yes" else {
            return page(request, view: .item(id), error: KeychainError(status: .param, message: "tick the box to confirm the deletion"))
        }
        do throws(KeychainError) {
            try directory.delete(id, in: keychain, passcode: form.secret("passcode"))
            return Response.redirect(to: "/?keychain=\(keychain.id)&notice=Deleted.", type: .normal)
        } catch {
            return page(Self.with(request, keychain: keychain.id), view: .item(id), error: error)
        }
    }

    func setTrust(_ request: Request, id: String) async throws -> Response {
        let form = try await fields(request)
        let keychain = try keychain(form.value("keychain"))
        do throws(KeychainError) {
            let items = try directory.items(in: keychain)
            guard let choice = form.value("trust").flatMap(TrustChoice.init(rawValue:)), let der = items.first(where: { $0.id == id })?.certificate else {
                throw KeychainError(status: .param, message: "no such certificate")
            }
            var trust = CertificateTrust(overall: choice)
            for (policy, title) in CertificateTrust.policies {
                guard let value = form.value("trust-" + policy) else { continue }
                guard let chosen = TrustChoice(rawValue: value) else { throw KeychainError(status: .param, message: "no such choice for \(title)") }
                trust.policies[policy] = chosen
            }
            try directory.setTrust(der, to: trust, passcode: form.secret("passcode"))
            let custom = trust.policies.values.contains { $0 != .systemDefaults }
            return Response.redirect(
                to: "/item/\(id)?keychain=\(keychain.id)&notice=Trust%20settings%20saved:%20\(Self.percent(custom ? "Custom Settings" : choice.title)).", type: .normal)
        } catch {
            return page(Self.with(request, keychain: keychain.id), view: .item(id), error: error)
        }
    }

    /// `POST /item/:id/export`: the certificate as a file to save (`Content-Disposition:
    /// attachment`, never cached); a .p12 needs the file's password and, once the keychain
    /// has one, the keychain password.
    func export(_ request: Request, id: String) async throws -> Response {
        let form = try await fields(request)
        let keychain = try keychain(form.value("keychain"))
        do throws(KeychainError) {
            guard let format = form.value("format").flatMap(ExportFormat.init(rawValue:)) else {
                throw KeychainError(status: .param, message: "choose a file format")
            }
            guard let item = try directory.items(in: keychain).first(where: { $0.id == id }) else { throw KeychainError(status: .itemNotFound) }
            let passphrase = form.secret("passphrase") ?? SecretBytes([])
            let passcode = form.secret("passcode")
            if format == .p12 {
                guard !passphrase.isEmpty else { throw KeychainError(status: .param, message: "a .p12 file needs a password of its own") }
                if passcode == nil, try directory.status().hasPasscode { throw KeychainError(status: .authFailed, message: "enter the keychain password") }
            }
            let file = try directory.export(item, in: keychain, as: format, passphrase: passphrase, passcode: passcode)
            return Response(
                status: .ok,
                headers: [.contentType: format.mediaType, .contentDisposition: "attachment; filename=\"\(Self.fileName(item.name)).\(format.rawValue)\""],
                body: .init(byteBuffer: ByteBuffer(bytes: file)))
        } catch {
            return page(Self.with(request, keychain: keychain.id), view: .item(id), error: error)
        }
    }

    func lock(_ request: Request, unlock: Bool) async throws -> Response {
        let form = try await fields(request)
        let keychain = try keychain(form.value("keychain"))
        do throws(KeychainError) {
            if unlock {
                try directory.unlock(keychain, password: form.secret("password") ?? SecretBytes([]))
            } else {
                try directory.lock(keychain)
            }
            activity.changed()
            return Response.redirect(to: "/?keychain=\(keychain.id)&notice=\(unlock ? "Unlocked" : "Locked")%20%E2%80%9C\(Self.percent(keychain.name))%E2%80%9D.", type: .normal)
        } catch {
            return page(Self.with(request, keychain: keychain.id), view: .list, error: error)
        }
    }

    /// Edit > Change Settings for Keychain: lock after N minutes of inactivity, and (file
    /// keychains) lock when sleeping.
    func saveSettings(_ request: Request) async throws -> Response {
        let form = try await fields(request)
        let keychain = try keychain(form.value("keychain"))
        do throws(KeychainError) {
            guard let minutes = UInt32(form.value("minutes") ?? "0"), minutes <= 10080 else {
                throw KeychainError(status: .param, message: "minutes must be a whole number up to 10080 (a week)")
            }
            try directory.setSettings(of: keychain, KeychainSettings(autoLockSeconds: minutes * 60, lockOnSleep: form.value("sleep") == "yes"))
            return Response.redirect(to: "/?keychain=\(keychain.id)&notice=Settings%20saved.", type: .normal)
        } catch {
            return page(Self.with(request, keychain: keychain.id), view: .list, error: error)
        }
    }

    func removeProfile(_ request: Request) async throws -> Response {
        let form = try await fields(request)
        guard let identifier = form.value("identifier"), form.value("confirm") == "yes" else {
            return page(request, view: .profiles, error: KeychainError(status: .param, message: "tick the box to confirm the removal"))
        }
        do throws(KeychainError) {
            try directory.removeProfile(identifier, passcode: form.secret("passcode"))
            return Response.redirect(to: "/profiles?notice=Removed%20\(Self.percent(identifier)).", type: .normal)
        } catch {
            return page(request, view: .profiles, error: error)
        }
    }

    /// `POST /reveal` (the page's script): the secret of one item as JSON, only with the
    /// keychain password once one is set — checked by the enclave every time, a wrong one
    /// counted by its throttle. Never cached, never logged.
    func reveal(_ request: Request) async throws -> Response {
        let form = try await fields(request)
        let keychain = try keychain(form.value("keychain"))
        do throws(KeychainError) {
            guard let id = form.value("id") else { throw KeychainError(status: .param, message: "which item?") }
            let passcode = form.secret("passcode")
            if passcode == nil, try directory.status().hasPasscode {
                throw KeychainError(status: .authFailed, message: "enter the keychain password")
            }
            let secret = try directory.secret(of: id, in: keychain, passcode: passcode)
            let text = String(validating: secret, as: UTF8.self) ?? Hexadecimal.string(secret)
            return json(["secret": text])
        } catch {
            return json(["error": Self.describe(error)], status: .forbidden)
        }
    }

    /// `POST /import` (the page's script): the file's bytes as the body, its passphrase in
    /// `X-Import-Passphrase`; what it added, as JSON.
    func importFile(_ request: Request) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: WindowImport.fileLimit)
        let keychain = try keychain(request.uri.queryParameters["keychain"].map(String.init))
        let passphrase = request.headers[.importPassphrase].flatMap { $0.removingPercentEncoding }.map { SecretBytes($0.utf8) } ?? SecretBytes([])
        do throws(KeychainError) {
            let summary = try WindowImport(directory: directory, keychain: keychain).importFile(Data(buffer: body), passphrase: passphrase)
            activity.changed()
            return json(["imported": summary])
        } catch {
            return json(["error": Self.describe(error)], status: .badRequest)
        }
    }

    func checkHealth(_ request: Request) async throws -> Response {
        let form = try await fields(request)
        let keychain = try keychain(form.value("keychain"))
        let request = Self.with(request, keychain: keychain.id)
        do throws(KeychainError) {
            let items = try directory.items(in: keychain)
            let passcode = form.secret("passcode")
            if passcode == nil, try directory.status().hasPasscode {
                throw KeychainError(status: .authFailed, message: "enter the keychain password")
            }
            let notes = Set(items.filter(\.isNote).map(\.id))
            let secrets = try directory.secrets(in: keychain, passcode: passcode).filter { !notes.contains($0.key) }
            return page(request, view: .health(HealthReport(items: items, secrets: secrets)))
        } catch {
            return page(request, view: .health(nil), error: error)
        }
    }

    // MARK: Helpers

    /// The keychain a form names (login when it names none).
    ///
    /// - Throws: 400 with errSecNoSuchKeychain's message for a name that is none of the sidebar's (a file keychain
    ///   taken off the search list since the page was shown): never another keychain instead.
    func keychain(_ id: String?) throws -> WindowKeychain {
        let keychains = directory.keychains()
        guard let id else { return keychains[0] }
        guard let keychain = keychains.first(where: { $0.id == id }) else {
            throw HTTPError(.badRequest, message: KeychainError.appleMessage(for: .noSuchKeychain) + " (it is no longer on the search list)")
        }
        return keychain
    }

    func fields(_ request: Request) async throws -> FormFields {
        var request = request
        return FormFields(try await request.collectBody(upTo: AccessGuard.formLimit))
    }

    func html(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    func json(_ object: [String: String], status: HTTPResponse.Status = .ok) -> Response {
        let body = "{" + object.keys.sorted().map { "\(Self.jsonString($0)):\(Self.jsonString(object[$0]!))" }.joined(separator: ",") + "}"
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "<": out += "\\u003c"
            case _ where scalar.value < 0x20: out += "\\u00" + (scalar.value < 16 ? "0" : "") + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// The request with its `keychain` query set (the page a failed POST shows again).
    static func with(_ request: Request, keychain: String) -> Request {
        var head = request.head
        head.path = request.uri.path + "?keychain=" + keychain
        return Request(head: head, body: .init(buffer: ByteBuffer()))
    }

    static func describe(_ error: KeychainError) -> String {
        let apple = error.status.message
        return error.message.isEmpty || error.message == apple ? apple : apple + " (" + error.message + ")"
    }

    static func percent(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }

    /// A name safe in a header's quoted string and as a file name: letters, digits, space,
    /// `.`, `-`, `_` (anything else becomes `_`).
    static func fileName(_ name: String) -> String {
        let safe = String(name.unicodeScalars.prefix(64).map { scalar -> Character in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || " .-_".unicodeScalars.contains(scalar)) ? Character(scalar) : "_"
        })
        let trimmed = safe.drop { $0 == " " || $0 == "." }.reversed().drop { $0 == " " || $0 == "." }.reversed()
        return trimmed.isEmpty ? "certificate" : String(trimmed)
    }

    static func grouped(_ hex: String) -> String {
        var out = ""
        for (index, character) in hex.uppercased().enumerated() {
            if index > 0, index % 2 == 0 { out += " " }
            out.append(character)
        }
        return out
    }
}

extension HTTPField.Name {
    static let importPassphrase = Self("X-Import-Passphrase")!
}
