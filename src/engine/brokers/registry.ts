import type { BrokerPort } from "./port.js";
import type { SimulatedBroker } from "./simulated.js";

/**
 * The brokers the service trades through, by broker id (the brokers table):
 * the copier finds an account's broker here. The simulated broker is also
 * named apart, for the sandbox that sets its faults.
 */
export class BrokerRegistry {
  readonly #ports = new Map<number, BrokerPort>();

  constructor(readonly simulated: SimulatedBroker) {
    this.#ports.set(simulated.brokerId, simulated);
  }

  /** The broker's port, or undefined for a broker no adapter is wired for. */
  get(brokerId: number): BrokerPort | undefined {
    return this.#ports.get(brokerId);
  }

  /** Every broker wired in (the desk hears each one's reports). */
  all(): readonly BrokerPort[] {
    return [...this.#ports.values()];
  }

  async start(): Promise<void> {
    await this.simulated.start();
  }

  /** Writes what the brokers hold in memory. */
  async close(): Promise<void> {
    await this.simulated.drain();
  }
}
