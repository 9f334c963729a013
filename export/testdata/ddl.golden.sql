-- fundsvc export schema version 4: dataset documents
CREATE EXTERNAL TABLE IF NOT EXISTS documents (
  `fund_id` string,
  `document_id` string,
  `kind` string,
  `title` string,
  `as_of` date,
  `currency` string,
  `position_count` int,
  `version` int,
  `created_at` timestamp,
  `created_by` string
)
PARTITIONED BY (`snapshot_date` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/documents/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/documents/snapshot_date=${snapshot_date}/',
  'fundsvc.schema_version' = '4'
);

-- fundsvc export schema version 4: dataset document_versions
CREATE EXTERNAL TABLE IF NOT EXISTS document_versions (
  `fund_id` string,
  `document_id` string,
  `kind` string,
  `title` string,
  `as_of` date,
  `currency` string,
  `position_count` int,
  `version` int,
  `created_at` timestamp,
  `created_by` string,
  `status` string
)
PARTITIONED BY (`snapshot_date` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/document_versions/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/document_versions/snapshot_date=${snapshot_date}/',
  'fundsvc.schema_version' = '4'
);

-- fundsvc export schema version 4: dataset capital_activities
CREATE EXTERNAL TABLE IF NOT EXISTS capital_activities (
  `fund_id` string,
  `document_id` string,
  `document_version` int,
  `as_of` date,
  `currency` string,
  `amount` decimal(19,4),
  `status` string,
  `activity_date` date,
  `description` string,
  `created_at` timestamp
)
PARTITIONED BY (`snapshot_date` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/capital_activities/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/capital_activities/snapshot_date=${snapshot_date}/',
  'fundsvc.schema_version' = '4'
);

-- fundsvc export schema version 4: dataset capital_accounts
CREATE EXTERNAL TABLE IF NOT EXISTS capital_accounts (
  `fund_id` string,
  `document_id` string,
  `investor_id` string,
  `position_id` string,
  `document_version` int,
  `as_of` date,
  `currency` string,
  `period_start` date,
  `beginning_nav` decimal(19,4),
  `contributions` decimal(19,4),
  `distributions` decimal(19,4),
  `offering_syndication_costs` decimal(19,4),
  `placement_fees` decimal(19,4),
  `partner_transfers` decimal(19,4),
  `management_fees_gross` decimal(19,4),
  `management_fee_rebate` decimal(19,4),
  `fee_waivers` decimal(19,4),
  `management_fee_offsets` decimal(19,4),
  `adviser_related_persons_expenses` decimal(19,4),
  `partnership_expenses` decimal(19,4),
  `investment_income` decimal(19,4),
  `net_realized_gain_loss` decimal(19,4),
  `net_unrealized_gain_loss` decimal(19,4),
  `ending_nav` decimal(19,4),
  `carried_interest_accrued_earned` decimal(19,4),
  `carried_interest_paid` decimal(19,4),
  `total_commitment` decimal(19,4),
  `beginning_unfunded_commitment` decimal(19,4),
  `less_contributions` decimal(19,4),
  `plus_recallable_distributions` decimal(19,4),
  `less_expired_released_commitments` decimal(19,4),
  `other_unfunded_adjustment` decimal(19,4),
  `ending_unfunded_commitment` decimal(19,4),
  `created_at` timestamp
)
PARTITIONED BY (`snapshot_date` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/capital_accounts/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/capital_accounts/snapshot_date=${snapshot_date}/',
  'fundsvc.schema_version' = '4'
);

-- fundsvc export schema version 4: dataset capital_calls
CREATE EXTERNAL TABLE IF NOT EXISTS capital_calls (
  `fund_id` string,
  `document_id` string,
  `investor_id` string,
  `position_id` string,
  `document_version` int,
  `as_of` date,
  `currency` string,
  `amount` decimal(19,4),
  `status` string,
  `due_date` date,
  `investment` decimal(19,4),
  `management_fee` decimal(19,4),
  `fund_expenses` decimal(19,4),
  `created_at` timestamp
)
PARTITIONED BY (`snapshot_date` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/capital_calls/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/capital_calls/snapshot_date=${snapshot_date}/',
  'fundsvc.schema_version' = '4'
);

-- fundsvc export schema version 4: dataset distributions
CREATE EXTERNAL TABLE IF NOT EXISTS distributions (
  `fund_id` string,
  `document_id` string,
  `investor_id` string,
  `position_id` string,
  `document_version` int,
  `as_of` date,
  `currency` string,
  `amount` decimal(19,4),
  `status` string,
  `payment_date` date,
  `return_of_capital` decimal(19,4),
  `realized_gain` decimal(19,4),
  `income` decimal(19,4),
  `recallable` decimal(19,4),
  `withholding` decimal(19,4),
  `created_at` timestamp
)
PARTITIONED BY (`snapshot_date` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/distributions/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/distributions/snapshot_date=${snapshot_date}/',
  'fundsvc.schema_version' = '4'
);

-- fundsvc export schema version 4: dataset transaction_lines
CREATE EXTERNAL TABLE IF NOT EXISTS transaction_lines (
  `fund_id` string,
  `document_id` string,
  `investor_id` string,
  `position_id` string,
  `document_version` int,
  `as_of` date,
  `currency` string,
  `item_type` string,
  `status` string,
  `line` int,
  `transaction_type` string,
  `ilpa_label` string,
  `net_treatment` string,
  `unfunded_effect` string,
  `amount` decimal(19,4),
  `effective_date` date,
  `stated` boolean,
  `created_at` timestamp
)
PARTITIONED BY (`snapshot_date` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/transaction_lines/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/transaction_lines/snapshot_date=${snapshot_date}/',
  'fundsvc.schema_version' = '4'
);

-- fundsvc export schema version 4: dataset unfunded_commitments
CREATE EXTERNAL TABLE IF NOT EXISTS unfunded_commitments (
  `fund_id` string,
  `document_id` string,
  `investor_id` string,
  `position_id` string,
  `document_version` int,
  `as_of` date,
  `currency` string,
  `amount` decimal(19,4),
  `status` string,
  `commitment` decimal(19,4),
  `created_at` timestamp
)
PARTITIONED BY (`snapshot_date` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/unfunded_commitments/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/unfunded_commitments/snapshot_date=${snapshot_date}/',
  'fundsvc.schema_version' = '4'
);

-- fundsvc export schema version 4: dataset funds
CREATE EXTERNAL TABLE IF NOT EXISTS funds (
  `fund_id` string,
  `name` string,
  `legal_name` string,
  `base_currency` string,
  `vintage_year` int,
  `target_size` decimal(19,4),
  `inception_date` date,
  `external_ids` string,
  `version` int,
  `updated_at` timestamp,
  `updated_by` string
)
PARTITIONED BY (`snapshot_date` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/funds/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/funds/snapshot_date=${snapshot_date}/',
  'fundsvc.schema_version' = '4'
);

-- fundsvc export schema version 4: dataset investors
CREATE EXTERNAL TABLE IF NOT EXISTS investors (
  `investor_id` string,
  `display_name` string,
  `investor_type` string,
  `external_ids` string,
  `version` int,
  `updated_at` timestamp,
  `updated_by` string
)
PARTITIONED BY (`snapshot_date` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/investors/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/investors/snapshot_date=${snapshot_date}/',
  'fundsvc.schema_version' = '4'
);

-- fundsvc export schema version 4: dataset positions
CREATE EXTERNAL TABLE IF NOT EXISTS positions (
  `fund_id` string,
  `position_id` string,
  `investor_id` string,
  `currency` string,
  `registered_at` timestamp,
  `document_count` int,
  `first_as_of` date,
  `last_as_of` date
)
PARTITIONED BY (`snapshot_date` string)
ROW FORMAT SERDE 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe'
STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat'
OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'
LOCATION 's3://lake/fundsvc/_symlink/positions/'
TBLPROPERTIES (
  'projection.enabled' = 'true',
  'projection.snapshot_date.type' = 'date',
  'projection.snapshot_date.format' = 'yyyy-MM-dd',
  'projection.snapshot_date.range' = '2020-01-01,NOW',
  'projection.snapshot_date.interval' = '1',
  'projection.snapshot_date.interval.unit' = 'DAYS',
  'storage.location.template' = 's3://lake/fundsvc/_symlink/positions/snapshot_date=${snapshot_date}/',
  'fundsvc.schema_version' = '4'
);
