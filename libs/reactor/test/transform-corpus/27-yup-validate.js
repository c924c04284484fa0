// https://github.com/jquense/yup
// Written for Gatehouse after the platform's documented example (same packages and calls), not copied.
'use strict';
module.exports = {
  needs: [],
  args: { body: { number: '42', exp_month: 13 }, headers: {} },
  configuration: {},
  code: `const yup = require('yup');
const { BadRequestError } = require('@gatehouse/reactor-errors');
module.exports = async function (req) {
  const schema = yup.object({ number: yup.string().matches(/^\\d{16}$/).required(), exp_month: yup.number().min(1).max(12).required() });
  try { await schema.validate(req.args.body, { abortEarly: false }); } catch (e) { throw new BadRequestError(e.errors); }
  return { body: req.args.body, headers: {} };
};`,
};
