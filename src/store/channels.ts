/**
 * The PostgreSQL notification channel on which a process tells the others,
 * at commit, which trading accounts moved: `<schema>|<origin>|<account>:<strategy>:<version>:<event seq>,...`.
 * Schemas sharing one database (parallel test runs, several deployments) share
 * channels too, hence the schema in front.
 */
export const ORDERS_CHANNEL = "strategy_hub_orders";
