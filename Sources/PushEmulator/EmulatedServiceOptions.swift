import ArgumentParser

/// A vendor side's `push-emulator` flags, declared in its folder and parsed by ArgumentParser as a part of
/// `EmulatedServices`; `apply` writes them into the side's settings. `Service` is the side they belong to, so the
/// one line that offers a side's flags registers the side as well.
protocol EmulatedServiceOptions: ParsableArguments {
    associatedtype Service: EmulatedService

    func apply(to configuration: inout EmulatorConfiguration) throws
}

/// How a registration line of `EmulatedServices` (an `@OptionGroup` of a side's options) is read.
protocol ServiceRegistration {
    static var service: any EmulatedService.Type { get }
    /// The flags as parsed (only on a parsed `EmulatedServices`).
    var options: any EmulatedServiceOptions { get }
}

extension OptionGroup: ServiceRegistration where Value: EmulatedServiceOptions {
    static var service: any EmulatedService.Type { Value.Service.self }
    var options: any EmulatedServiceOptions { wrappedValue }
}

/// How a registered side is named: in URLs (`name`, `/_emulator/<name>/stats`), in texts (`vendor`), and what it
/// stands in for (`title`).
public struct EmulatedServiceName: Sendable, Equatable {
    public let name: String
    public let vendor: String
    public let title: String
}

extension EmulatedServices {
    /// The registered sides in the order of their lines, read off the option groups by reflection, as ArgumentParser
    /// reads them: a side is registered once, by its flags.
    static var registered: [any EmulatedService.Type] {
        Mirror(reflecting: EmulatedServices()).children.compactMap { child in
            (type(of: child.value) as? any ServiceRegistration.Type)?.service
        }
    }

    /// The registered sides' names, for texts that list them (the CLI's overview, tests).
    public static var names: [EmulatedServiceName] {
        registered.map { EmulatedServiceName(name: $0.name, vendor: $0.vendor, title: $0.title) }
    }

    /// `["A", "B", "C"]` as "A, B and C", for texts that list the sides.
    public static func spelledOut(_ items: [String]) -> String {
        items.count < 2 ? items.joined() : items.dropLast().joined(separator: ", ") + " and " + items[items.count - 1]
    }

    /// Writes every side's parsed flags into its settings, in the order of the lines.
    public func apply(to configuration: inout EmulatorConfiguration) throws {
        for child in Mirror(reflecting: self).children {
            try (child.value as? any ServiceRegistration)?.options.apply(to: &configuration)
        }
    }
}
