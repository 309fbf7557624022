export { Quantity, QuantityError } from './quantity.js';
export type { Format, QuantityErrorReason } from './quantity.js';
export {
  addLists,
  describeFieldError,
  excessOf,
  formatList,
  formatListInline,
  isZeroList,
  lessThanOrEqual,
  listsEqual,
  maskList,
  maxLists,
  negativeKeys,
  parseResourceList,
  removeZeros,
  subtractLists,
} from './resource-list.js';
export type { FieldError, ResourceList } from './resource-list.js';
