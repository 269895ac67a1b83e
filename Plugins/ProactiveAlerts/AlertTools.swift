import SanadCore

/// `list_alerts`: the user's active proactive alerts, soonest first.
struct ListAlertsTool: Tool {
    let plugin: ProactiveAlertsPlugin

    var name: String { "list_alerts" }
    var description: String {
        "Lists the user's documents that expire within the alert window, soonest first, with days remaining and links."
    }
    var argumentsSchema: JSONValue {
        .object(["type": .string("object"), "properties": .object([:]), "additionalProperties": .bool(false)])
    }

    func call(_ arguments: JSONValue) async throws -> JSONValue {
        _ = try ToolArguments(tool: name, arguments, allowed: [])
        return .object([
            "today": .string(plugin.today.description), "windowDays": .number(Double(plugin.windowDays)),
            "alerts": .array(plugin.alerts.map(\.json)),
        ])
    }
}

/// `open_service_page`: the review and payment page of one of the user's alerts.
struct OpenServicePageTool: Tool {
    let plugin: ProactiveAlertsPlugin

    var name: String { "open_service_page" }
    var description: String {
        "Opens the review and payment page of a renewal service for one of the user's alerts."
    }
    var argumentsSchema: JSONValue {
        .object([
            "type": .string("object"),
            "properties": .object([
                "serviceType": .object([
                    "type": .string("string"), "enum": .array(AlertServiceType.allCases.map { .string($0.rawValue) }),
                ]),
                "alertId": .object(["type": .string("string")]),
            ]),
            "required": .array([.string("serviceType"), .string("alertId")]),
            "additionalProperties": .bool(false),
        ])
    }

    func call(_ arguments: JSONValue) async throws -> JSONValue {
        let args = try ToolArguments(tool: name, arguments, allowed: ["serviceType", "alertId"])
        let typeName = try args.string("serviceType")
        guard let service = AlertServiceType(rawValue: typeName) else {
            throw ToolError(
                tool: name,
                "serviceType '\(typeName)' is not one of: \(AlertServiceType.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        let alertId = try args.string("alertId")
        let title = plugin.userData.documents.first { $0.id == alertId }?.type.renewalService.title ?? service.title
        do {
            return try plugin.servicePage(
                service: service, link: DeepLink(serviceType: service.rawValue, title: title, alertId: alertId)
            ).json
        } catch {
            throw ToolError(tool: name, "\(error)")
        }
    }
}
