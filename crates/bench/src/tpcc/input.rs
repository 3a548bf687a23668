//! The inputs of the five transactions, drawn from a worker's generator by pure functions
//! (TPC-C clauses 2.4.1, 2.5.1, 2.6.1, 2.7.1 and 2.8.1 with go-tpc's choices), so that they can
//! be tested without a server and a seed replays them.

use super::rand::{random_customer_id, random_item_id, random_last_name, NurandConstants, TpccRng};
use super::stats::TransactionKind;
use super::DISTRICTS_PER_WAREHOUSE;

/// Fewest lines of a New-Order.
pub const MIN_LINES: usize = 5;
/// Most lines of a New-Order.
pub const MAX_LINES: usize = 15;

/// The input of one transaction.
#[derive(Clone, Debug, PartialEq)]
pub enum TransactionInput {
    NewOrder(NewOrderInput),
    Payment(PaymentInput),
    OrderStatus(OrderStatusInput),
    Delivery(DeliveryInput),
    StockLevel(StockLevelInput),
}

impl TransactionInput {
    /// Draws the input of a transaction of `kind`.
    pub fn generate(kind: TransactionKind, rng: &mut TpccRng, scale: &Scale) -> TransactionInput {
        match kind {
            TransactionKind::NewOrder => {
                TransactionInput::NewOrder(NewOrderInput::generate(rng, scale))
            }
            TransactionKind::Payment => {
                TransactionInput::Payment(PaymentInput::generate(rng, scale))
            }
            TransactionKind::OrderStatus => TransactionInput::OrderStatus(OrderStatusInput {
                w_id: scale.warehouse(rng),
                d_id: rng.uniform(1, DISTRICTS_PER_WAREHOUSE),
                customer: CustomerKey::generate(rng, &scale.constants),
            }),
            TransactionKind::Delivery => TransactionInput::Delivery(DeliveryInput {
                w_id: scale.warehouse(rng),
                carrier_id: rng.uniform(1, 10),
            }),
            TransactionKind::StockLevel => TransactionInput::StockLevel(StockLevelInput {
                w_id: scale.warehouse(rng),
                d_id: rng.uniform(1, DISTRICTS_PER_WAREHOUSE),
                threshold: rng.uniform(10, 20),
            }),
        }
    }
}

/// What the generator decides for one worker: the warehouse count and the NURand constants.
#[derive(Clone, Copy, Debug)]
pub struct Scale {
    pub warehouses: u32,
    pub constants: NurandConstants,
}

impl Scale {
    /// A uniform warehouse.
    pub fn warehouse(&self, rng: &mut TpccRng) -> u32 {
        rng.uniform(1, self.warehouses)
    }

    /// A warehouse other than `home` (`home` itself when there is only one).
    pub fn other_warehouse(&self, rng: &mut TpccRng, home: u32) -> u32 {
        if self.warehouses == 1 {
            return home;
        }
        loop {
            let other = rng.uniform(1, self.warehouses);
            if other != home {
                return other;
            }
        }
    }
}

/// One line of a New-Order.
#[derive(Clone, Debug, PartialEq)]
pub struct LineInput {
    /// The item, −1 for the unused item that forces the rollback.
    pub i_id: i64,
    pub supply_w_id: u32,
    pub quantity: u32,
}

/// The input of a New-Order (clause 2.4.1).
#[derive(Clone, Debug, PartialEq)]
pub struct NewOrderInput {
    pub w_id: u32,
    pub d_id: u32,
    pub c_id: u32,
    pub lines: Vec<LineInput>,
}

impl NewOrderInput {
    /// Draws a New-Order: 5..=15 distinct NURand items, 1% remote lines, and in 1% of the
    /// orders an unused last item.
    pub fn generate(rng: &mut TpccRng, scale: &Scale) -> NewOrderInput {
        let w_id = scale.warehouse(rng);
        let d_id = rng.uniform(1, DISTRICTS_PER_WAREHOUSE);
        let c_id = random_customer_id(rng, &scale.constants);
        let count = rng.uniform(MIN_LINES as u32, MAX_LINES as u32) as usize;
        let rollback = rng.uniform(1, 100) == 1;
        let mut lines: Vec<LineInput> = Vec::with_capacity(count);
        for number in 0..count {
            let i_id = if rollback && number == count - 1 {
                -1
            } else {
                loop {
                    let id = i64::from(random_item_id(rng, &scale.constants));
                    if lines.iter().all(|l| l.i_id != id) {
                        break id;
                    }
                }
            };
            let supply_w_id = if scale.warehouses == 1 || rng.uniform(1, 100) != 1 {
                w_id
            } else {
                scale.other_warehouse(rng, w_id)
            };
            let quantity = rng.uniform(1, 10);
            lines.push(LineInput {
                i_id,
                supply_w_id,
                quantity,
            });
        }
        NewOrderInput {
            w_id,
            d_id,
            c_id,
            lines,
        }
    }

    /// Whether every line is supplied by the home warehouse.
    pub fn all_local(&self) -> bool {
        self.lines.iter().all(|l| l.supply_w_id == self.w_id)
    }
}

/// How Payment and Order-Status find their customer.
#[derive(Clone, Debug, PartialEq)]
pub enum CustomerKey {
    Id(u32),
    LastName(String),
}

impl CustomerKey {
    /// 60% by last name, 40% by id (clauses 2.5.1.2 and 2.6.1.2).
    fn generate(rng: &mut TpccRng, constants: &NurandConstants) -> CustomerKey {
        if rng.percent(60) {
            CustomerKey::LastName(random_last_name(rng, constants))
        } else {
            CustomerKey::Id(random_customer_id(rng, constants))
        }
    }
}

/// The input of a Payment (clause 2.5.1).
#[derive(Clone, Debug, PartialEq)]
pub struct PaymentInput {
    pub w_id: u32,
    pub d_id: u32,
    pub c_w_id: u32,
    pub c_d_id: u32,
    pub customer: CustomerKey,
    /// 1.00..=5000.00 in cents.
    pub amount_cents: u32,
}

impl PaymentInput {
    /// Draws a Payment: 85% of customers in the home district, 15% in a random district of
    /// another warehouse.
    pub fn generate(rng: &mut TpccRng, scale: &Scale) -> PaymentInput {
        let w_id = scale.warehouse(rng);
        let d_id = rng.uniform(1, DISTRICTS_PER_WAREHOUSE);
        let amount_cents = rng.uniform(100, 500_000);
        let customer = CustomerKey::generate(rng, &scale.constants);
        let (c_w_id, c_d_id) = if scale.warehouses == 1 || rng.percent(85) {
            (w_id, d_id)
        } else {
            (
                scale.other_warehouse(rng, w_id),
                rng.uniform(1, DISTRICTS_PER_WAREHOUSE),
            )
        };
        PaymentInput {
            w_id,
            d_id,
            c_w_id,
            c_d_id,
            customer,
            amount_cents,
        }
    }
}

/// The input of an Order-Status (clause 2.6.1).
#[derive(Clone, Debug, PartialEq)]
pub struct OrderStatusInput {
    pub w_id: u32,
    pub d_id: u32,
    pub customer: CustomerKey,
}

/// The input of a Delivery (clause 2.7.1): all ten districts of one warehouse.
#[derive(Clone, Debug, PartialEq)]
pub struct DeliveryInput {
    pub w_id: u32,
    pub carrier_id: u32,
}

/// The input of a Stock-Level (clause 2.8.1).
#[derive(Clone, Debug, PartialEq)]
pub struct StockLevelInput {
    pub w_id: u32,
    pub d_id: u32,
    pub threshold: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scale(warehouses: u32) -> Scale {
        Scale {
            warehouses,
            constants: NurandConstants::for_run(&mut TpccRng::seeded(0)),
        }
    }

    #[test]
    fn new_order_inputs() {
        let mut rng = TpccRng::seeded(4);
        let scale = scale(5);
        let (mut rollbacks, mut remote, mut lines) = (0, 0, 0);
        for _ in 0..10_000 {
            let input = NewOrderInput::generate(&mut rng, &scale);
            assert!((5..=15).contains(&input.lines.len()));
            assert!((1..=5).contains(&input.w_id) && (1..=10).contains(&input.d_id));
            assert!((1..=3000).contains(&input.c_id));
            let mut ids: Vec<i64> = input.lines.iter().map(|l| l.i_id).collect();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), input.lines.len(), "items are distinct");
            for (n, line) in input.lines.iter().enumerate() {
                assert!((1..=10).contains(&line.quantity));
                if line.i_id == -1 {
                    assert_eq!(n, input.lines.len() - 1, "only the last item is unused");
                    rollbacks += 1;
                } else {
                    assert!((1..=100_000).contains(&line.i_id));
                }
                if line.supply_w_id != input.w_id {
                    remote += 1;
                }
                lines += 1;
            }
        }
        assert!(
            (50..150).contains(&rollbacks),
            "{rollbacks} rollbacks in 10000"
        );
        assert!(
            remote > lines / 200 && remote < lines / 50,
            "{remote} of {lines}"
        );
    }

    #[test]
    fn one_warehouse_is_always_local() {
        let mut rng = TpccRng::seeded(8);
        let scale = scale(1);
        for _ in 0..2_000 {
            let order = NewOrderInput::generate(&mut rng, &scale);
            assert!(order.all_local());
            let payment = PaymentInput::generate(&mut rng, &scale);
            assert_eq!(
                (payment.c_w_id, payment.c_d_id),
                (payment.w_id, payment.d_id)
            );
            assert!((100..=500_000).contains(&payment.amount_cents));
        }
    }

    #[test]
    fn payments_by_name_and_remote() {
        let mut rng = TpccRng::seeded(12);
        let scale = scale(10);
        let (mut by_name, mut remote) = (0, 0);
        for _ in 0..10_000 {
            let p = PaymentInput::generate(&mut rng, &scale);
            if matches!(p.customer, CustomerKey::LastName(_)) {
                by_name += 1;
            }
            if p.c_w_id != p.w_id {
                remote += 1;
            }
        }
        assert!((5_700..6_300).contains(&by_name), "{by_name}");
        assert!((1_300..1_700).contains(&remote), "{remote}");
    }

    #[test]
    fn every_kind_draws_its_own_input() {
        let mut rng = TpccRng::seeded(3);
        let scale = scale(4);
        for kind in TransactionKind::ALL {
            let input = TransactionInput::generate(kind, &mut rng, &scale);
            let matches = matches!(
                (&input, kind),
                (TransactionInput::NewOrder(_), TransactionKind::NewOrder)
                    | (TransactionInput::Payment(_), TransactionKind::Payment)
                    | (
                        TransactionInput::OrderStatus(_),
                        TransactionKind::OrderStatus
                    )
                    | (TransactionInput::Delivery(_), TransactionKind::Delivery)
                    | (TransactionInput::StockLevel(_), TransactionKind::StockLevel)
            );
            assert!(matches, "{kind:?} drew {input:?}");
        }
        for _ in 0..1_000 {
            if let TransactionInput::StockLevel(s) =
                TransactionInput::generate(TransactionKind::StockLevel, &mut rng, &scale)
            {
                assert!((10..=20).contains(&s.threshold) && (1..=4).contains(&s.w_id));
            }
            if let TransactionInput::Delivery(d) =
                TransactionInput::generate(TransactionKind::Delivery, &mut rng, &scale)
            {
                assert!((1..=10).contains(&d.carrier_id));
            }
        }
    }
}
