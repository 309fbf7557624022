export { Quantity, QuantityError } from './quantity.js';
export type { Format, QuantityErrorReason } from './quantity.js';
export {
  addLists,
  describeFieldError,
  formatList,
  formatListInline,
  isZeroList,
  lessThanOrEqual,
  listsEqual,
  maskList,
  maxLists,
  negativeKeys,
  parseResourceList,
  positivePart,
  removeZeros,
  subtractLists,
} from './resource-list.js';
export type { FieldError, ResourceList } from './resource-list.js';
